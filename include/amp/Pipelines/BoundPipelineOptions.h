//===- BoundPipelineOptions.h - textual options from a struct ---*- C++ -*-===//
//
// The textual options of a registered pipeline (`amp-front-end{type=bf16
// ...}`) made from an options struct's bind(OptionsBinder &): one
// PassOptions option per field, with the struct's default, so that the
// struct is the only declaration. `get()` binds a fresh struct again (the
// fields come in the same order) and copies the parsed values into it;
// ArrayRef lists point into this object's storage.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_BOUNDPIPELINEOPTIONS_H
#define AMP_PIPELINES_BOUNDPIPELINEOPTIONS_H

#include "amp/Support/OptionsBinder.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace mlir::amp {

template <typename OptionsT>
class BoundPipelineOptions
    : public PassPipelineOptions<BoundPipelineOptions<OptionsT>> {
  using Base = detail::PassOptions;
  template <typename T>
  using ScalarOption = typename Base::template Option<T>;
  using ListOption = typename Base::template ListOption<std::string>;

public:
  BoundPipelineOptions() {
    OptionsT defaults;
    Maker maker(*this);
    defaults.bind(maker);
  }
  BoundPipelineOptions(const BoundPipelineOptions &) = delete;
  BoundPipelineOptions &operator=(const BoundPipelineOptions &) = delete;

  /// The struct with the parsed values (the defaults where not given).
  OptionsT get() const {
    OptionsT result;
    Reader reader(*this);
    result.bind(reader);
    return result;
  }

private:
  /// One option per field, initialised to the field's default.
  class Maker : public ForwardingBinder<Maker> {
  public:
    using ForwardingBinder<Maker>::bind;
    explicit Maker(BoundPipelineOptions &parent) : parent(parent) {}
    void bind(const OptionSpec &s, std::vector<std::string> &v) override {
      list(s, v);
    }
    void bind(const OptionSpec &s, llvm::ArrayRef<std::string> &v) override {
      list(s, v);
    }
    void bind(const OptionSpec &s, std::optional<double> &v) override {
      auto option = std::make_unique<ScalarOption<double>>(
          parent, s.name, llvm::cl::desc(s.description));
      if (v)
        *option = *v;
      parent.owned.push_back(std::move(option));
    }
    void bind(const OptionSpec &s, int &v,
              llvm::ArrayRef<OptionChoice> choices) override {
      auto option = std::make_unique<ScalarOption<OptionChoiceValue>>(
          parent, s.name, llvm::cl::desc(s.description),
          llvm::cl::init(OptionChoiceValue(v)));
      for (const OptionChoice &choice : choices)
        option->getParser().addLiteralOption(
            choice.name, OptionChoiceValue(choice.value), choice.description);
      parent.owned.push_back(std::move(option));
    }

    template <typename T>
    void scalar(const OptionSpec &s, T &v) {
      parent.owned.push_back(std::make_unique<ScalarOption<T>>(
          parent, s.name, llvm::cl::desc(s.description), llvm::cl::init(v)));
    }
    void list(const OptionSpec &s, llvm::ArrayRef<std::string> defaults) {
      // list_init: the first value given replaces the defaults.
      parent.owned.push_back(std::make_unique<ListOption>(
          parent, s.name, llvm::cl::desc(s.description),
          llvm::cl::list_init(defaults)));
    }

  private:
    BoundPipelineOptions &parent;
  };

  /// Copies the options' values into the fields, in binding order.
  class Reader : public ForwardingBinder<Reader> {
  public:
    explicit Reader(const BoundPipelineOptions &parent) : parent(parent) {}
    void bind(const OptionSpec &, std::vector<std::string> &v) override {
      llvm::ArrayRef<std::string> values(nextList());
      v.assign(values.begin(), values.end());
    }
    void bind(const OptionSpec &, llvm::ArrayRef<std::string> &v) override {
      v = llvm::ArrayRef<std::string>(nextList());
    }
    void bind(const OptionSpec &, std::optional<double> &v) override {
      const auto &option = static_cast<const ScalarOption<double> &>(next());
      if (option.hasValue())
        v = option.getValue();
    }
    void bind(const OptionSpec &, int &v,
              llvm::ArrayRef<OptionChoice>) override {
      OptionChoiceValue value;
      scalar(OptionSpec(), value);
      v = static_cast<int>(value);
    }
    using ForwardingBinder<Reader>::bind;
    template <typename T>
    void scalar(const OptionSpec &, T &v) {
      v = static_cast<const ScalarOption<T> &>(next()).getValue();
    }

  private:
    const ListOption &nextList() {
      return static_cast<const ListOption &>(next());
    }
    const llvm::cl::Option &next() { return *parent.owned[index++]; }
    const BoundPipelineOptions &parent;
    size_t index = 0;
  };

  std::vector<std::unique_ptr<llvm::cl::Option>> owned;
};

} // namespace mlir::amp

#endif // AMP_PIPELINES_BOUNDPIPELINEOPTIONS_H

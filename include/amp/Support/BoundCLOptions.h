//===- BoundCLOptions.h - the tools' flags from a struct --------*- C++ -*-===//
//
// Command-line flags made from an options struct's bind(OptionsBinder &) or
// a pass's generated bindOptions: one flag per field, `amp-<name>`, with the
// struct's default and description. A tool may rename a flag, keep a list
// flag from splitting at commas (a regex may contain one), or leave a field
// out; `get()` returns the struct as the command line gives it. Only tools
// construct these (libraries never read flags).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_SUPPORT_BOUNDCLOPTIONS_H
#define AMP_SUPPORT_BOUNDCLOPTIONS_H

#include "amp/Support/OptionsBinder.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"

#include <functional>
#include <list>
#include <memory>

namespace mlir::amp {

/// How a tool spells one option's flag.
struct FlagSpelling {
  /// The flag's name; empty: no flag for this option.
  std::string flag;
  /// Lists: values split at commas.
  bool commaSeparated = true;
};

template <typename OptionsT>
class BoundCLOptions {
public:
  using BindFn = std::function<void(OptionsT &, OptionsBinder &)>;

  /// Registers the flags of `defaults`' fields (as `bind` lists them) in
  /// `category`, named `<prefix><option name>`; `spellings` overrides a
  /// field's flag by option name.
  BoundCLOptions(llvm::cl::OptionCategory &category, OptionsT defaults,
                 BindFn bind, llvm::StringMap<FlagSpelling> spellings = {},
                 llvm::StringRef prefix = "amp-")
      : bindFn(std::move(bind)), prefix(prefix), defaults(std::move(defaults)) {
    Maker maker(*this, category, spellings);
    bindFn(this->defaults, maker);
  }
  BoundCLOptions(const BoundCLOptions &) = delete;
  BoundCLOptions &operator=(const BoundCLOptions &) = delete;

  /// The struct as the command line gives it (lists point into the flags'
  /// storage).
  OptionsT get() const {
    OptionsT result = defaults;
    Reader reader(*this);
    bindFn(result, reader);
    return result;
  }

private:
  using List = llvm::cl::list<std::string>;

  class Maker : public ForwardingBinder<Maker> {
  public:
    using ForwardingBinder<Maker>::bind;
    Maker(BoundCLOptions &parent, llvm::cl::OptionCategory &category,
          const llvm::StringMap<FlagSpelling> &spellings)
        : parent(parent), category(category), spellings(spellings) {}
    void bind(const OptionSpec &s, std::vector<std::string> &v) override {
      list(s, v);
    }
    void bind(const OptionSpec &s, llvm::ArrayRef<std::string> &v) override {
      list(s, v);
    }
    void bind(const OptionSpec &s, std::optional<double> &v) override {
      if (claim(s))
        parent.owned.push_back(std::make_unique<llvm::cl::opt<double>>(
            llvm::StringRef(parent.names.back()),
            llvm::cl::desc(s.description), llvm::cl::cat(category)));
    }
    void bind(const OptionSpec &s, int &v,
              llvm::ArrayRef<OptionChoice> choices) override {
      auto value = static_cast<OptionChoiceValue>(v);
      scalar(s, value);
      auto *option = static_cast<llvm::cl::opt<OptionChoiceValue> *>(
          parent.owned.back().get());
      if (!option)
        return;
      for (const OptionChoice &choice : choices)
        option->getParser().addLiteralOption(
            choice.name, OptionChoiceValue(choice.value), choice.description);
    }

    template <typename T>
    void scalar(const OptionSpec &s, T &v) {
      if (claim(s))
        parent.owned.push_back(std::make_unique<llvm::cl::opt<T>>(
            llvm::StringRef(parent.names.back()),
            llvm::cl::desc(s.description), llvm::cl::init(v),
            llvm::cl::cat(category)));
    }

  private:
    /// The field's flag spelling, its name kept in `names` (the flag will
    /// be the next owned option); none (a null slot) if it has no flag.
    std::optional<FlagSpelling> claim(const OptionSpec &s) {
      auto it = spellings.find(s.name);
      FlagSpelling how = it != spellings.end()
                             ? it->second
                             : FlagSpelling{parent.prefix + s.name.str()};
      if (how.flag.empty()) {
        parent.owned.push_back(nullptr);
        return std::nullopt;
      }
      parent.names.push_back(how.flag);
      return how;
    }
    void list(const OptionSpec &s, llvm::ArrayRef<std::string> defaults) {
      std::optional<FlagSpelling> how = claim(s);
      if (!how)
        return;
      // list_init: the first value given replaces the defaults.
      auto option = std::make_unique<List>(
          llvm::StringRef(parent.names.back()), llvm::cl::desc(s.description),
          llvm::cl::list_init(defaults), llvm::cl::cat(category));
      if (how->commaSeparated)
        option->setMiscFlag(llvm::cl::CommaSeparated);
      parent.owned.push_back(std::move(option));
    }
    BoundCLOptions &parent;
    llvm::cl::OptionCategory &category;
    const llvm::StringMap<FlagSpelling> &spellings;
  };

  class Reader : public ForwardingBinder<Reader> {
  public:
    using ForwardingBinder<Reader>::bind;
    explicit Reader(const BoundCLOptions &parent) : parent(parent) {}
    void bind(const OptionSpec &, std::vector<std::string> &v) override {
      if (const List *option = static_cast<const List *>(next()))
        v = *&*option;
    }
    void bind(const OptionSpec &, llvm::ArrayRef<std::string> &v) override {
      if (const List *option = static_cast<const List *>(next()))
        v = *&*option;
    }
    void bind(const OptionSpec &, std::optional<double> &v) override {
      if (const auto *option =
              static_cast<const llvm::cl::opt<double> *>(next()))
        if (option->getNumOccurrences())
          v = option->getValue();
    }
    void bind(const OptionSpec &, int &v,
              llvm::ArrayRef<OptionChoice>) override {
      auto value = static_cast<OptionChoiceValue>(v);
      scalar(OptionSpec(), value);
      v = static_cast<int>(value);
    }
    template <typename T>
    void scalar(const OptionSpec &, T &v) {
      if (const auto *option = static_cast<const llvm::cl::opt<T> *>(next()))
        v = option->getValue();
    }

  private:
    const llvm::cl::Option *next() { return parent.owned[index++].get(); }
    const BoundCLOptions &parent;
    size_t index = 0;
  };

  BindFn bindFn;
  std::string prefix;
  OptionsT defaults;
  /// The flags' names (cl::opt keeps a StringRef), in a list that does not
  /// move its elements.
  std::list<std::string> names;
  std::vector<std::unique_ptr<llvm::cl::Option>> owned;
};

} // namespace mlir::amp

#endif // AMP_SUPPORT_BOUNDCLOPTIONS_H

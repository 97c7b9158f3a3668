//===- OptionsBinder.h - options declared once, bound many ways -*- C++ -*-===//
//
// An options struct (a pipeline's, a pass's) lists its fields once, with
// their names and descriptions, by calling an OptionsBinder; its defaults
// are the struct's member initialisers. Each front end is a binder: the
// textual pipeline options (BoundPipelineOptions), the tools' command-line
// flags (CLOptionsBinder) and a documentation table. So no option is
// declared twice and no default is repeated. The passes' own options come
// from their TableGen declarations: amp-tblgen -gen-pass-option-binders
// writes `bindOptions(<Pass>Options &, OptionsBinder &)` for each pass.
// (IREE's OptionsBinder is the model.)
//
//===----------------------------------------------------------------------===//

#ifndef AMP_SUPPORT_OPTIONSBINDER_H
#define AMP_SUPPORT_OPTIONSBINDER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::amp {

/// What a struct says about one field: its name (the textual pipeline
/// option; the tools' flag is `amp-<name>` unless the tool renames it) and
/// a one-line description.
struct OptionSpec {
  llvm::StringRef name;
  llvm::StringRef description;
};

/// One value of an enumerated option: the enumerator (as an int), its
/// spelling and a description.
struct OptionChoice {
  int value;
  llvm::StringRef name;
  llvm::StringRef description;
};

/// Receives the fields of an options struct, by reference.
class OptionsBinder {
public:
  virtual ~OptionsBinder() = default;
  virtual void bind(const OptionSpec &spec, bool &value) = 0;
  virtual void bind(const OptionSpec &spec, unsigned &value) = 0;
  virtual void bind(const OptionSpec &spec, int64_t &value) = 0;
  virtual void bind(const OptionSpec &spec, double &value) = 0;
  virtual void bind(const OptionSpec &spec, std::string &value) = 0;
  /// A list (comma separated in textual pipelines) the struct owns.
  virtual void bind(const OptionSpec &spec, std::vector<std::string> &value) = 0;
  /// A list whose storage the binder keeps (the passes' generated option
  /// structs hold ArrayRefs): valid as long as the binder's options.
  virtual void bind(const OptionSpec &spec,
                    llvm::ArrayRef<std::string> &value) = 0;
  /// A number whose absence means "the default of the context" (momentum:
  /// 0 for sgd, 0.9 for momentum): nullopt unless given.
  virtual void bind(const OptionSpec &spec, std::optional<double> &value) = 0;
  /// One of `choices` (see bindEnum).
  virtual void bind(const OptionSpec &spec, int &value,
                    llvm::ArrayRef<OptionChoice> choices) = 0;
};

/// The value type binders give enumerated options (a distinct type, so that
/// llvm::cl uses its named-value parser for it).
enum class OptionChoiceValue : int {};

/// A binder that handles every scalar kind alike: forwards them to
/// `Derived::scalar(spec, value)`. Lists, optional numbers and choices are
/// the derived binder's.
template <typename Derived>
class ForwardingBinder : public OptionsBinder {
public:
  void bind(const OptionSpec &s, bool &v) override { self().scalar(s, v); }
  void bind(const OptionSpec &s, unsigned &v) override { self().scalar(s, v); }
  void bind(const OptionSpec &s, int64_t &v) override { self().scalar(s, v); }
  void bind(const OptionSpec &s, double &v) override { self().scalar(s, v); }
  void bind(const OptionSpec &s, std::string &v) override {
    self().scalar(s, v);
  }

private:
  Derived &self() { return static_cast<Derived &>(*this); }
};

/// An enum field as one of `choices`, spelled by name everywhere; the
/// spellings are parsed once, by the binder.
template <typename EnumT>
void bindEnum(OptionsBinder &binder, const OptionSpec &spec, EnumT &field,
              llvm::ArrayRef<OptionChoice> choices) {
  int value = static_cast<int>(field);
  binder.bind(spec, value, choices);
  field = static_cast<EnumT>(value);
}

} // namespace mlir::amp

#endif // AMP_SUPPORT_OPTIONSBINDER_H

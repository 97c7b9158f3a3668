//===- Options.cpp - pipeline options set by name -------------------------===//
//
// The API's binder over the options structs' bind(): values by the names
// the textual pipeline options use, checked for their kind; and the
// description of each option (name, kind, default) for bindings' docs.
//
//===----------------------------------------------------------------------===//

#include "APIInternal.h"

#include "amp/Pipelines/Pipelines.h"
#include "amp/Target/ONNX/ModelLimits.h"
#include "amp/Training/TrainStep.h"
#include "amp/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

using namespace amp::api;
using mlir::amp::OptionChoice;
using mlir::amp::OptionSpec;

KeywordBinder::KeywordBinder(const OptionList &values) : values(values) {}

void KeywordBinder::reserve(llvm::StringRef name, llvm::StringRef why) {
  reserved.emplace_back(name.str(), why.str());
}

const OptionValue *KeywordBinder::find(const OptionSpec &spec) {
  known.push_back(spec.name.str());
  const OptionValue *found = nullptr;
  for (const auto &[name, value] : values)
    if (name == spec.name)
      found = &value;
  if (found)
    used.insert(spec.name.str());
  return found;
}

void KeywordBinder::fail(const OptionSpec &spec, llvm::StringRef expected) {
  if (error.empty())
    error = ("option '" + spec.name + "' expects " + expected).str();
}

void KeywordBinder::bind(const OptionSpec &spec, bool &value) {
  if (const OptionValue *v = find(spec)) {
    if (auto *b = std::get_if<bool>(v))
      value = *b;
    else
      fail(spec, "a bool");
  }
}

/// An integer (a float is refused rather than truncated).
static std::optional<int64_t> integerOf(const OptionValue &v) {
  if (auto *i = std::get_if<int64_t>(&v))
    return *i;
  return std::nullopt;
}

void KeywordBinder::bind(const OptionSpec &spec, unsigned &value) {
  if (const OptionValue *v = find(spec)) {
    std::optional<int64_t> i = integerOf(*v);
    if (i && *i >= 0 && *i <= std::numeric_limits<unsigned>::max())
      value = static_cast<unsigned>(*i);
    else
      fail(spec, "a non-negative integer");
  }
}

void KeywordBinder::bind(const OptionSpec &spec, int64_t &value) {
  if (const OptionValue *v = find(spec)) {
    if (std::optional<int64_t> i = integerOf(*v))
      value = *i;
    else
      fail(spec, "an integer");
  }
}

static std::optional<double> numberOf(const OptionValue &v) {
  if (auto *d = std::get_if<double>(&v))
    return *d;
  if (auto *i = std::get_if<int64_t>(&v))
    return static_cast<double>(*i);
  return std::nullopt;
}

void KeywordBinder::bind(const OptionSpec &spec, double &value) {
  if (const OptionValue *v = find(spec)) {
    if (std::optional<double> d = numberOf(*v))
      value = *d;
    else
      fail(spec, "a number");
  }
}

void KeywordBinder::bind(const OptionSpec &spec, std::optional<double> &value) {
  if (const OptionValue *v = find(spec)) {
    if (std::optional<double> d = numberOf(*v))
      value = *d;
    else
      fail(spec, "a number");
  }
}

void KeywordBinder::bind(const OptionSpec &spec, std::string &value) {
  if (const OptionValue *v = find(spec)) {
    if (auto *s = std::get_if<std::string>(v))
      value = *s;
    else
      fail(spec, "a string");
  }
}

void KeywordBinder::bind(const OptionSpec &spec,
                         std::vector<std::string> &value) {
  if (const OptionValue *v = find(spec)) {
    if (auto *list = std::get_if<std::vector<std::string>>(v))
      value = *list;
    else
      fail(spec, "a list of strings");
  }
}

void KeywordBinder::bind(const OptionSpec &spec,
                         llvm::ArrayRef<std::string> &value) {
  if (const OptionValue *v = find(spec)) {
    if (auto *list = std::get_if<std::vector<std::string>>(v)) {
      lists.push_back(*list);
      value = lists.back();
    } else {
      fail(spec, "a list of strings");
    }
  }
}

void KeywordBinder::bind(const OptionSpec &spec, int &value,
                         llvm::ArrayRef<OptionChoice> choices) {
  const OptionValue *v = find(spec);
  if (!v)
    return;
  std::vector<std::string> names;
  for (const OptionChoice &choice : choices)
    names.push_back(("'" + choice.name + "'").str());
  if (auto *s = std::get_if<std::string>(v))
    for (const OptionChoice &choice : choices)
      if (choice.name == *s) {
        value = choice.value;
        return;
      }
  fail(spec, "one of " + llvm::join(names, ", "));
}

std::string KeywordBinder::finish() {
  for (const auto &[name, why] : reserved)
    for (const auto &given : values)
      if (given.first == name && error.empty())
        error = "option '" + name + "' cannot be given here: " + why;
  for (const auto &given : values)
    if (!used.count(given.first) && error.empty()) {
      std::vector<std::string> names = known;
      llvm::sort(names);
      error = "unknown option '" + given.first +
              "' (the options are: " + llvm::join(names, ", ") + ")";
    }
  return error;
}

namespace {
/// Describes each option: name, kind and default.
class DescribeBinder : public mlir::amp::OptionsBinder {
public:
  std::vector<OptionInfo> infos;

  void bind(const OptionSpec &s, bool &v) override {
    add(s, "bool", v ? "true" : "false");
  }
  void bind(const OptionSpec &s, unsigned &v) override {
    add(s, "int", std::to_string(v));
  }
  void bind(const OptionSpec &s, int64_t &v) override {
    add(s, "int", std::to_string(v));
  }
  void bind(const OptionSpec &s, double &v) override {
    add(s, "float", shortest(v));
  }
  void bind(const OptionSpec &s, std::optional<double> &v) override {
    add(s, "float", v ? shortest(*v) : "");
  }
  void bind(const OptionSpec &s, std::string &v) override {
    add(s, "string", v);
  }
  void bind(const OptionSpec &s, std::vector<std::string> &v) override {
    add(s, "list", llvm::join(v, ","));
  }
  void bind(const OptionSpec &s, llvm::ArrayRef<std::string> &v) override {
    add(s, "list", llvm::join(v, ","));
  }
  void bind(const OptionSpec &s, int &v,
            llvm::ArrayRef<OptionChoice> choices) override {
    OptionInfo &info = add(s, "choice", "");
    for (const OptionChoice &choice : choices) {
      info.choices.push_back(choice.name.str());
      if (choice.value == v)
        info.defaultValue = choice.name.str();
    }
  }

private:
  /// The shortest spelling that reads back as `v`
  /// (0.001, 3.4028234663852886e+38).
  static std::string shortest(double v) {
    char buffer[32];
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(buffer, sizeof(buffer), "%.*g", digits, v);
      if (std::strtod(buffer, nullptr) == v)
        break;
    }
    return buffer;
  }
  OptionInfo &add(const OptionSpec &s, llvm::StringRef kind,
                  std::string defaultValue) {
    infos.push_back({s.name.str(),
                     s.description.str(),
                     kind.str(),
                     std::move(defaultValue),
                     {}});
    return infos.back();
  }
};
} // namespace

std::vector<OptionInfo> amp::api::describeOptions(OptionSet set) {
  DescribeBinder binder;
  switch (set) {
  case OptionSet::FrontEnd: {
    mlir::amp::FrontEndOptions options;
    options.bind(binder);
    break;
  }
  case OptionSet::ImportLimits: {
    mlir::amp::ModelLimits limits;
    limits.bind(binder);
    break;
  }
  case OptionSet::TrainStep: {
    mlir::amp::training::TrainStepOptions options;
    options.bind(binder);
    options.frontEnd.bind(binder);
    break;
  }
  }
  return binder.infos;
}

std::string amp::api::renderReportHtml(const std::string &reportJson) {
  return mlir::amp::renderAutocastReportHtml(reportJson);
}

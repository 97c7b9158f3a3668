//===- BoundOptionsTest.cpp - options declared once, bound twice ----------===//
//
// One struct (amp-autocast's generated options plus fields of its own) bound
// as textual pipeline options and as command-line flags: defaults come from
// the struct, parsed values land in the right fields, lists split (or not)
// as declared, and bad values are errors.
//
//===----------------------------------------------------------------------===//

#include "amp/Support/BoundCLOptions.h"
#include "amp/Pipelines/BoundPipelineOptions.h"
#include "amp/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::amp;

namespace {
enum class Kind { Plain = 3, Fancy = 5 };

struct Holder {
  AmpAutocastOptions autocast;
  std::vector<std::string> names{"a"};
  int64_t bytes = 7;
  double ratio = 0.25;
  std::optional<double> momentum;
  Kind kind = Kind::Plain;

  void bind(OptionsBinder &binder) {
    bindOptions(autocast, binder);
    binder.bind({"names", "Names"}, names);
    binder.bind({"bytes", "Bytes"}, bytes);
    binder.bind({"ratio", "Ratio"}, ratio);
    binder.bind({"momentum", "Momentum"}, momentum);
    bindEnum(binder, {"kind", "Kind"}, kind,
             {{int(Kind::Plain), "plain", "plain"},
              {int(Kind::Fancy), "fancy", "fancy"}});
  }
};

/// Every field as "name=value", in binding order.
class Printer : public OptionsBinder {
public:
  void bind(const OptionSpec &s, bool &v) override { add(s, v ? "1" : "0"); }
  void bind(const OptionSpec &s, unsigned &v) override { add(s, std::to_string(v)); }
  void bind(const OptionSpec &s, int64_t &v) override { add(s, std::to_string(v)); }
  void bind(const OptionSpec &s, double &v) override { add(s, std::to_string(v)); }
  void bind(const OptionSpec &s, std::string &v) override { add(s, v); }
  void bind(const OptionSpec &s, std::vector<std::string> &v) override {
    add(s, llvm::join(v, "|"));
  }
  void bind(const OptionSpec &s, llvm::ArrayRef<std::string> &v) override {
    add(s, llvm::join(v, "|"));
  }
  void bind(const OptionSpec &s, std::optional<double> &v) override {
    add(s, v ? std::to_string(*v) : "unset");
  }
  void bind(const OptionSpec &s, int &v, llvm::ArrayRef<OptionChoice>) override {
    add(s, std::to_string(v));
  }
  std::vector<std::string> fields;

private:
  void add(const OptionSpec &s, const std::string &value) {
    fields.push_back(s.name.str() + "=" + value);
  }
};

std::vector<std::string> print(Holder holder) {
  Printer printer;
  holder.bind(printer);
  return printer.fields;
}

TEST(BoundPipelineOptions, DefaultsAreTheStructs) {
  BoundPipelineOptions<Holder> options;
  EXPECT_EQ(print(options.get()), print(Holder()));
  // The pass's TableGen defaults reach the textual options.
  EXPECT_EQ(options.get().autocast.type, "f16");
  EXPECT_EQ(options.get().autocast.optLevel, 1u);
  EXPECT_TRUE(options.get().autocast.keepIOTypes);
}

TEST(BoundPipelineOptions, ParsesIntoTheFields) {
  BoundPipelineOptions<Holder> options;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  ASSERT_TRUE(succeeded(options.parseFromString(
      "type=bf16 opt-level=2 allow=MatMul,Exp node-rules=enc.*=deny "
      "keep-io-types=false names=x,y bytes=12 ratio=0.5 momentum=0 "
      "kind=fancy",
      os)))
      << errors;
  Holder parsed = options.get();
  EXPECT_EQ(parsed.autocast.type, "bf16");
  EXPECT_EQ(parsed.autocast.optLevel, 2u);
  EXPECT_EQ(parsed.autocast.allowOps.vec(),
            (std::vector<std::string>{"MatMul", "Exp"}));
  EXPECT_EQ(parsed.autocast.nodeRules.vec(),
            (std::vector<std::string>{"enc.*=deny"}));
  EXPECT_FALSE(parsed.autocast.keepIOTypes);
  EXPECT_TRUE(parsed.autocast.denyOps.empty());
  EXPECT_EQ(parsed.names, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(parsed.bytes, 12);
  EXPECT_EQ(parsed.ratio, 0.5);
  EXPECT_EQ(parsed.momentum, std::optional<double>(0.0));
  EXPECT_EQ(parsed.kind, Kind::Fancy);
  // Not given: still unset.
  EXPECT_FALSE(BoundPipelineOptions<Holder>().get().momentum.has_value());
}

TEST(BoundPipelineOptions, RejectsBadValues) {
  BoundPipelineOptions<Holder> options;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  EXPECT_TRUE(failed(options.parseFromString("opt-level=high", os)));
  EXPECT_TRUE(failed(options.parseFromString("no-such-option=1", os)));
  EXPECT_TRUE(failed(options.parseFromString("kind=other", os)));
}

TEST(BoundCLOptions, FlagsBindToTheStruct) {
  llvm::cl::OptionCategory category("bound options test");
  Holder defaults;
  defaults.autocast.type = ""; // a tool's own default
  BoundCLOptions<Holder> flags(
      category, defaults, [](Holder &h, OptionsBinder &b) { h.bind(b); },
      {{"node-rules", {"test-node-rule", /*commaSeparated=*/false}},
       {"summary", {""}},
       {"ratio", {"test-ratio"}}});
  EXPECT_EQ(print(flags.get()), print(defaults));
  const char *argv[] = {"test",
                        "--amp-type=bf16",
                        "--amp-allow=MatMul,Exp",
                        "--test-node-rule=a,b=deny",
                        "--test-node-rule=c=allow",
                        "--amp-names=p,q",
                        "--amp-bytes=3",
                        "--test-ratio=0.75",
                        "--amp-kind=fancy"};
  ASSERT_TRUE(llvm::cl::ParseCommandLineOptions(std::size(argv), argv, "",
                                                &llvm::nulls()));
  Holder parsed = flags.get();
  EXPECT_EQ(parsed.autocast.type, "bf16");
  EXPECT_EQ(parsed.autocast.allowOps.vec(),
            (std::vector<std::string>{"MatMul", "Exp"}));
  // Not split at the comma: a regex may hold one.
  EXPECT_EQ(parsed.autocast.nodeRules.vec(),
            (std::vector<std::string>{"a,b=deny", "c=allow"}));
  EXPECT_EQ(parsed.names, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(parsed.bytes, 3);
  EXPECT_EQ(parsed.ratio, 0.75);
  EXPECT_EQ(parsed.kind, Kind::Fancy);
  EXPECT_FALSE(parsed.momentum.has_value());
  // Left out: no flag, the default stays.
  EXPECT_EQ(llvm::cl::getRegisteredOptions().count("amp-summary"), 0u);
  EXPECT_FALSE(parsed.autocast.printSummary);
  llvm::cl::ResetCommandLineParser();
}
} // namespace

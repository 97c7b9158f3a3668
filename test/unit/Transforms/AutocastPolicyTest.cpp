//===- AutocastPolicyTest.cpp - the autocast policy as data --------------===//

#include "amp/Transforms/AutocastPolicy.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlir::amp;

namespace {

TEST(AutocastPolicy, DefaultListsOnlyNameRegisteredOps) {
  std::set<std::string> registered;
  for (const OnnxOpName &entry : getOnnxOpNames())
    registered.insert(entry.onnxName.str());
  // Re-applying every default entry validates its name.
  AutocastPolicy policy = AutocastPolicy::getDefault();
  std::string printed;
  llvm::raw_string_ostream os(printed);
  policy.print(os);
  EXPECT_NE(printed.find("  - MatMul  #"), std::string::npos);
  for (const std::string &name : registered) {
    AutocastPolicy::Decision decision = policy.classify(name, "");
    // Every op is either in a list or reported as unlisted.
    EXPECT_FALSE(decision.reason.empty()) << name;
  }
  EXPECT_EQ(policy.classify("MatMul", "").cls, PrecisionClass::Allow);
  EXPECT_EQ(policy.classify("Exp", "").cls, PrecisionClass::Deny);
  EXPECT_EQ(policy.classify("Softmax", "").cls, PrecisionClass::Infer);
  EXPECT_EQ(policy.classify("Reshape", "").cls, PrecisionClass::Clear);
  EXPECT_EQ(policy.classify("Cast", "").cls, PrecisionClass::Unlisted);
  EXPECT_TRUE(policy.needsF32Accumulation("LayerNormalization"));
  EXPECT_FALSE(policy.needsF32Accumulation("MatMul"));
}

TEST(AutocastPolicy, OptLevels) {
  AutocastPolicy o2 = AutocastPolicy::getDefault();
  o2.applyOptLevel(2);
  EXPECT_EQ(o2.classify("Exp", "").cls, PrecisionClass::Allow);
  EXPECT_EQ(o2.classify("Reshape", "").cls, PrecisionClass::Clear);
  EXPECT_TRUE(o2.needsF32Accumulation("Softmax"));
  AutocastPolicy o3 = AutocastPolicy::getDefault();
  o3.applyOptLevel(3);
  EXPECT_FALSE(o3.needsF32Accumulation("Softmax"));
}

TEST(AutocastPolicy, OverridesAndNodeRules) {
  AutocastPolicy policy = AutocastPolicy::getDefault();
  ASSERT_FALSE(bool(policy.setClass("Exp", PrecisionClass::Allow, "test")));
  EXPECT_EQ(policy.classify("Exp", "").cls, PrecisionClass::Allow);
  ASSERT_FALSE(bool(policy.setClass("Exp", PrecisionClass::Unlisted, "test")));
  EXPECT_EQ(policy.classify("Exp", "").cls, PrecisionClass::Unlisted);
  llvm::Error unknown = policy.setClass("Matmul", PrecisionClass::Deny, "t");
  ASSERT_TRUE(bool(unknown));
  EXPECT_NE(llvm::toString(std::move(unknown)).find("did you mean 'MatMul'"),
            std::string::npos);

  ASSERT_FALSE(bool(policy.addNodeRuleSpec("enc/.*/MatMul=deny", "test")));
  ASSERT_FALSE(bool(
      policy.addNodeRule("enc/0/MatMul", false, PrecisionClass::Clear, "t")));
  // The last matching rule wins; regexes match the whole name.
  EXPECT_EQ(policy.classify("MatMul", "enc/0/MatMul").cls,
            PrecisionClass::Clear);
  EXPECT_EQ(policy.classify("MatMul", "enc/1/MatMul").cls,
            PrecisionClass::Deny);
  EXPECT_EQ(policy.classify("MatMul", "x/enc/1/MatMul").cls,
            PrecisionClass::Allow);
  llvm::Error bad = policy.addNodeRuleSpec("enc=fast", "test");
  ASSERT_TRUE(bool(bad));
  EXPECT_NE(llvm::toString(std::move(bad)).find("unknown class 'fast'"),
            std::string::npos);
  llvm::Error regex = policy.addNodeRuleSpec("enc[=deny", "test");
  ASSERT_TRUE(bool(regex));
  EXPECT_NE(llvm::toString(std::move(regex)).find("invalid regex"),
            std::string::npos);
}

} // namespace

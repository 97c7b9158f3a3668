// Malformed rules: an error at the record, no output.
//
// RUN: split-file %s %t
// RUN: not amp-tblgen -gen-gradient-rules -I %amp_src_root/include %t/unknown.td 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not amp-tblgen -gen-gradient-rules -I %amp_src_root/include %t/arity.td 2>&1 | FileCheck %s --check-prefix=ARITY
// RUN: not amp-tblgen -gen-gradient-rules -I %amp_src_root/include %t/twice.td 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not amp-tblgen -gen-gradient-rules -I %amp_src_root/include %t/leaf.td 2>&1 | FileCheck %s --check-prefix=LEAF

//--- unknown.td
include "amp/Dialect/Amp/Gradients/GradientRules.td"
def Frobnicate;
// UNKNOWN: error: unknown DAG operator 'Frobnicate'
def : GradientRule<"NegOp", [(Frobnicate $grad)]>;

//--- arity.td
include "amp/Dialect/Amp/Gradients/GradientRules.td"
// ARITY: error: 'Id' takes 1 argument(s), not 2
def : GradientRule<"NegOp", [(Id $grad, $X)]>;

//--- twice.td
include "amp/Dialect/Amp/Gradients/GradientRules.td"
// TWICE: error: `$a` is named twice
def : GradientRule<"MulOp", [(Mul (Neg $grad):$a, (Neg $grad):$a)]>;

//--- leaf.td
include "amp/Dialect/Amp/Gradients/GradientRules.td"
// LEAF: error: a leaf must be a `$name`, not '"text"'
def : GradientRule<"NegOp", [(Neg "text")]>;

//===- ElementwiseRules.td - one-line elementwise gradients -*- tablegen -*-===//
//
// The rules of the unary and broadcasting binary ops whose gradient is one
// expression per operand. `amp-tblgen -gen-gradient-rules` writes their C++
// (ElementwiseRules.inc, included by Elementwise.cpp); the rules that branch
// on attributes or have optional or variadic operands are C++ there.
// $X/$Y: a unary op's input and output; $A, $B, $C: a binary op's inputs and
// output; $grad: the incoming gradient.
//
//===----------------------------------------------------------------------===//

include "amp/Dialect/Amp/Gradients/GradientRules.td"

// Unary ops.
def : GradientRule<"IdentityOp", [(Id $grad)]>;
def : GradientRule<"NegOp", [(Neg $grad)]>;
// Zero where y <= 0, else the gradient (a NaN gradient passes, as in
// PyTorch).
def : GradientRule<"ReluOp", [
  (Where (LessOrEqual $Y, (Scalar<"0.0"> $Y):$zero), $zero, $grad)]>;
def : GradientRule<"LeakyReluOp", [
  (Where (Greater $X, (Scalar<"0.0"> $X)), $grad,
         (Scale<"op.getAlpha().convertToDouble()"> $grad))]>;
def : GradientRule<"SigmoidOp", [
  (Mul $grad, (Mul $Y, (Sub (Scalar<"1.0"> $Y), $Y)))]>;
def : GradientRule<"TanhOp", [
  (Mul $grad, (Sub (Scalar<"1.0"> $Y), (Mul $Y, $Y)))]>;
def : GradientRule<"ExpOp", [(Mul $grad, $Y)]>;
def : GradientRule<"LogOp", [(Div $grad, $X)]>;
def : GradientRule<"SqrtOp", [(Div $grad, (Scale<"2.0"> $Y))]>;
def : GradientRule<"ReciprocalOp", [(Neg (Mul $grad, (Mul $Y, $Y)))]>;
def : GradientRule<"AbsOp", [(Mul $grad, (Sign $X))]>;
def : GradientRule<"SinOp", [(Mul $grad, (Cos $X))]>;
def : GradientRule<"CosOp", [(Neg (Mul $grad, (Sin $X)))]>;
def : GradientRule<"SoftplusOp", [(Mul $grad, (Sigmoid $X))]>;
// d erf(x) = 2/sqrt(pi) exp(-x^2).
def : GradientRule<"ErfOp", [
  (Mul $grad, (Scale<"2.0 / std::sqrt(M_PI)"> (Exp (Neg (Mul $X, $X)))))]>;
// alpha where 0 < alpha x + beta < 1, else 0.
def : GradientRule<"HardSigmoidOp", [
  (Where (And (Greater (Add (Scale<"op.getAlpha().convertToDouble()"> $X),
                            (Scalar<"op.getBeta().convertToDouble()"> $X)):$lin,
                       (Scalar<"0.0"> $X):$zero),
              (Less $lin, (Scalar<"1.0"> $X))),
         (Scale<"op.getAlpha().convertToDouble()"> $grad), $zero)]>;
// y = x relu6(x + 3) / 6: dy = 0 (x < -3), x/3 + 1/2 (|x| <= 3), 1 (x > 3).
def : GradientRule<"HardSwishOp", [
  (Mul $grad,
       (Where (Greater $X, (Scalar<"3.0"> $X)), (Scalar<"1.0"> $X),
              (Where (Less $X, (Scalar<"-3.0"> $X)), (Scalar<"0.0"> $X),
                     (Add (Scale<"1.0 / 3.0"> $X), (Scalar<"0.5"> $X)))))]>;

// Broadcasting binary ops.
def : BroadcastGradientRule<"AddOp", [(Id $grad), (Id $grad)]>;
def : BroadcastGradientRule<"SubOp", [(Id $grad), (Neg $grad)]>;
def : BroadcastGradientRule<"MulOp", [(Mul $grad, $B), (Mul $grad, $A)]>;
// d(a/b)/db = -(a/b)/b = -(g/b) c.
def : BroadcastGradientRule<"DivOp", [
  (Id (Div $grad, $B):$gOverB), (Neg (Mul $gOverB, $C))]>;
// d x^y / dx = y x^(y-1); the exponent is treated as a constant.
def : BroadcastGradientRule<"PowOp", [
  (Mul $grad, (Mul (CastLike $Y, $X):$y,
                   (Pow $X, (Sub $y, (Scalar<"1.0"> $X))))),
  (NoGradient)]>;
def : BroadcastGradientRule<"WhereOp", [
  (NoGradient),
  (Where $condition, $grad, (Scalar<"0.0"> $grad):$zero),
  (Where $condition, $zero, $grad)]>;

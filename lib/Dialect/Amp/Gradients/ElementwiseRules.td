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
def : GradientRule<"TanOp", [
  (Mul $grad, (Add (Scalar<"1.0"> $Y), (Mul $Y, $Y)))]>;
def : GradientRule<"SinhOp", [(Mul $grad, (Cosh $X))]>;
def : GradientRule<"CoshOp", [(Mul $grad, (Sinh $X))]>;
// The inverse functions: 1/sqrt(1 - x^2), -1/sqrt(1 - x^2), 1/(1 + x^2),
// 1/sqrt(x^2 + 1), 1/sqrt(x^2 - 1), 1/(1 - x^2).
def : GradientRule<"AsinOp", [
  (Div $grad, (Sqrt (Sub (Scalar<"1.0"> $X), (Mul $X, $X))))]>;
def : GradientRule<"AcosOp", [
  (Neg (Div $grad, (Sqrt (Sub (Scalar<"1.0"> $X), (Mul $X, $X)))))]>;
def : GradientRule<"AtanOp", [
  (Div $grad, (Add (Scalar<"1.0"> $X), (Mul $X, $X)))]>;
def : GradientRule<"AsinhOp", [
  (Div $grad, (Sqrt (Add (Mul $X, $X), (Scalar<"1.0"> $X))))]>;
def : GradientRule<"AcoshOp", [
  (Div $grad, (Sqrt (Sub (Mul $X, $X), (Scalar<"1.0"> $X))))]>;
def : GradientRule<"AtanhOp", [
  (Div $grad, (Sub (Scalar<"1.0"> $X), (Mul $X, $X)))]>;
// y = x / (1 + |x|): dy = 1 / (1 + |x|)^2.
def : GradientRule<"SoftsignOp", [
  (Div $grad, (Mul (Add (Scalar<"1.0"> $X), (Abs $X)):$d, $d))]>;
// y = x tanh(softplus(x)): dy = t + x sigmoid(x) (1 - t^2).
def : GradientRule<"MishOp", [
  (Mul $grad, (Add (Tanh (Softplus $X)):$t,
                   (Mul (Mul $X, (Sigmoid $X)),
                        (Sub (Scalar<"1.0"> $X), (Mul $t, $t)))))]>;
// y = x sigmoid(alpha x): dy = s + alpha x s (1 - s).
def : GradientRule<"SwishOp", [
  (Mul $grad,
       (Add (Sigmoid (Scale<"op.getAlpha().convertToDouble()"> $X):$ax):$s,
            (Mul $ax, (Mul $s, (Sub (Scalar<"1.0"> $X), $s)))))]>;
// The exponential units: the gradient where x > 0 (PyTorch's convention at
// 0), else the derivative of the exponential branch.
def : GradientRule<"EluOp", [
  (Where (Greater $X, (Scalar<"0.0"> $X)), $grad,
         (Mul $grad, (Scale<"op.getAlpha().convertToDouble()"> (Exp $X))))]>;
def : GradientRule<"CeluOp", [
  (Where (Greater $X, (Scalar<"0.0"> $X)), $grad,
         (Mul $grad,
              (Exp (Scale<"1.0 / op.getAlpha().convertToDouble()"> $X))))]>;
def : GradientRule<"SeluOp", [
  (Scale<"op.getGamma().convertToDouble()">
     (Where (Greater $X, (Scalar<"0.0"> $X)), $grad,
            (Mul $grad,
                 (Scale<"op.getAlpha().convertToDouble()"> (Exp $X)))))]>;
def : GradientRule<"ThresholdedReluOp", [
  (Where (Greater $X, (Scalar<"op.getAlpha().convertToDouble()"> $X)), $grad,
         (Scalar<"0.0"> $grad))]>;
// Passes where |x| > lambd (both shrunk branches have slope 1).
def : GradientRule<"ShrinkOp", [
  (Where (Or (Less $X, (Scalar<"-op.getLambd().convertToDouble()"> $X)),
             (Greater $X, (Scalar<"op.getLambd().convertToDouble()"> $X))),
         $grad, (Scalar<"0.0"> $grad))]>;
// Piecewise constant: a zero gradient, as PyTorch gives.
def : GradientRule<"CeilOp", [(ZerosLike $X)]>;
def : GradientRule<"FloorOp", [(ZerosLike $X)]>;
def : GradientRule<"RoundOp", [(ZerosLike $X)]>;
def : GradientRule<"SignOp", [(ZerosLike $X)]>;

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
// slope x where x < 0, else x; PyTorch's convention at 0 (the slope).
def : BroadcastGradientRule<"PReluOp", [
  (Where (Greater $A, (Scalar<"0.0"> $A):$zero), $grad, (Mul $grad, $B)),
  (Where (Greater $A, $zero), (Scalar<"0.0"> $grad), (Mul $grad, $A))]>;
def : BroadcastGradientRule<"WhereOp", [
  (NoGradient),
  (Where $condition, $grad, (Scalar<"0.0"> $grad):$zero),
  (Where $condition, $zero, $grad)]>;

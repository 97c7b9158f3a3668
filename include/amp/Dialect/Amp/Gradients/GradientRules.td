//===- GradientRules.td - declarative gradient rules -------*- tablegen -*-===//
//
// One-line gradient rules as records, in the style of Enzyme-MLIR's
// `MLIRDerivative` (ArithDerivatives.td). `amp-tblgen -gen-gradient-rules`
// turns each `GradientRule` into the C++ function
//
//   void gradient(OpT op, GradientBuilder &gb, In rg, Grads og)
//
// (plus `isDifferentiable` when an operand has no gradient) that
// GradientModel<OpT> attaches through GradientOpInterface, and lists the ops
// for registration. Rules that need control flow over attributes, variadic
// or optional operands, or more than one expression per operand stay in C++
// next to them.
//
// A rule gives, per operand (ODS order), an expression DAG for
// d(loss)/d(operand):
//   - leaves: `$grad` is the incoming gradient of result 0; any other
//     `$Name` is the op's ODS accessor `op.getName()` (an operand or result),
//     or a value named earlier in the same rule (see below);
//   - `(Mul a, b)`, `(Sub a, b)`, ...: GradientBuilder's helpers;
//   - `(Where c, a, b)`, `(Sign x)`, ...: any amp op (`GradientOp`), result
//     types inferred;
//   - `(Scalar<"1.0"> $like)`: a rank-0 constant of $like's element type;
//   - `(Scale<"2.0"> a)`: a times a constant; the string is a C++ double
//     expression that may read the forward `op` (an attribute);
//   - `(NoGradient)`: the operand is not differentiable;
//   - `(...):$name` names a subexpression: it is built once and later
//     `$name` leaves reuse it.
// `BroadcastGradientRule` sums each operand's gradient back to the operand's
// shape (numpy broadcasting).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_GRADIENTS_GRADIENTRULES_TD
#define AMP_DIALECT_AMP_GRADIENTS_GRADIENTRULES_TD

/// A GradientBuilder helper method, called with the DAG's arguments.
class GradientHelper<string method> {
  string helper = method;
}
/// (Id a): a itself (a top-level leaf, or a named subexpression).
def Id : GradientHelper<"">;
def Add : GradientHelper<"add">;
def Sub : GradientHelper<"sub">;
def Mul : GradientHelper<"mul">;
def Div : GradientHelper<"div">;
def Neg : GradientHelper<"neg">;
/// (CastLike a, b): a converted to b's element type.
def CastLike : GradientHelper<"castLike">;
/// (ZerosLike a): float zeros of a's type (a piecewise-constant op's
/// gradient).
def ZerosLike : GradientHelper<"zerosLike">;

/// An amp op (C++ class name), created with its result types inferred.
class GradientOp<string cppClass> {
  string opClass = cppClass;
}
def Abs : GradientOp<"AbsOp">;
def And : GradientOp<"AndOp">;
def Cos : GradientOp<"CosOp">;
def Cosh : GradientOp<"CoshOp">;
def Erf : GradientOp<"ErfOp">;
def Exp : GradientOp<"ExpOp">;
def Greater : GradientOp<"GreaterOp">;
def GreaterOrEqual : GradientOp<"GreaterOrEqualOp">;
def Less : GradientOp<"LessOp">;
def LessOrEqual : GradientOp<"LessOrEqualOp">;
def Or : GradientOp<"OrOp">;
def Pow : GradientOp<"PowOp">;
def Sigmoid : GradientOp<"SigmoidOp">;
def Sign : GradientOp<"SignOp">;
def Sin : GradientOp<"SinOp">;
def Sinh : GradientOp<"SinhOp">;
def Softplus : GradientOp<"SoftplusOp">;
def Sqrt : GradientOp<"SqrtOp">;
def Tanh : GradientOp<"TanhOp">;
def Where : GradientOp<"WhereOp">;

/// (Scalar<"v"> $like): a rank-0 constant v of $like's element type.
class Scalar<string v> {
  string value = v;
}
/// (Scale<"f"> a): a * f, f a C++ double expression (may use `op`).
class Scale<string f> {
  string factor = f;
}
/// The operand has no gradient.
def NoGradient;

/// The rule of op `cppClass`: one DAG per operand, in ODS operand order.
class GradientRule<string cppClass, list<dag> operandGradients> {
  string op = cppClass;
  list<dag> gradients = operandGradients;
  bit sumToOperandShape = 0;
}
/// The rule of a broadcasting op: gradients are summed to operand shapes.
class BroadcastGradientRule<string cppClass, list<dag> operandGradients>
    : GradientRule<cppClass, operandGradients> {
  let sumToOperandShape = 1;
}

#endif // AMP_DIALECT_AMP_GRADIENTS_GRADIENTRULES_TD

// amp-tblgen -gen-gradient-rules: the C++ of declarative gradient rules.
//
// RUN: amp-tblgen -gen-gradient-rules -I %amp_src_root/include %s | FileCheck %s

include "amp/Dialect/Amp/Gradients/GradientRules.td"

// One statement per DAG node, post-order; leaves are ODS accessors or the
// incoming gradient; Scalar/Scale take C++ expressions.
// CHECK-LABEL: void gradient(SigmoidOp op, GradientBuilder &gb, In rg, Grads og) {
// CHECK-NEXT:   (void)op;
// CHECK-NEXT:   Value v0 = gb.scalar(op.getY(), 1.0);
// CHECK-NEXT:   Value v1 = gb.sub(v0, op.getY());
// CHECK-NEXT:   Value v2 = gb.mul(op.getY(), v1);
// CHECK-NEXT:   Value v3 = gb.mul(rg[0], v2);
// CHECK-NEXT:   og[0] = v3;
// CHECK-NEXT: }
def : GradientRule<"SigmoidOp", [
  (Mul $grad, (Mul $Y, (Sub (Scalar<"1.0"> $Y), $Y)))]>;

// Amp ops by class; attribute factors.
// CHECK-LABEL: void gradient(LeakyReluOp op,
// CHECK:   Value v1 = gb.create<GreaterOp>({op.getX(), v0});
// CHECK-NEXT:   Value v2 = gb.mulScalar(rg[0], op.getAlpha().convertToDouble());
// CHECK-NEXT:   Value v3 = gb.create<WhereOp>({v1, rg[0], v2});
def : GradientRule<"LeakyReluOp", [
  (Where (Greater $X, (Scalar<"0.0"> $X)), $grad,
         (Scale<"op.getAlpha().convertToDouble()"> $grad))]>;

// Named subexpressions are built once; broadcasting rules sum to the
// operand's shape; NoGradient operands get an isDifferentiable overload.
// CHECK-LABEL: bool isDifferentiable(WhereOp op, unsigned index, Overload) {
// CHECK-NEXT:   return (index == 1 || index == 2) && isDifferentiable<WhereOp>(op, index, Overload{});
// CHECK-LABEL: void gradient(WhereOp op,
// CHECK:   Value zero = gb.scalar(rg[0], 0.0);
// CHECK-NEXT:   Value v0 = gb.create<WhereOp>({op.getCondition(), rg[0], zero});
// CHECK-NEXT:   og[1] = gb.sumToShape(v0, op->getOperand(1));
// CHECK-NEXT:   Value v1 = gb.create<WhereOp>({op.getCondition(), zero, rg[0]});
// CHECK-NEXT:   og[2] = gb.sumToShape(v1, op->getOperand(2));
def : BroadcastGradientRule<"WhereOp", [
  (NoGradient),
  (Where $condition, $grad, (Scalar<"0.0"> $grad):$zero),
  (Where $condition, $zero, $grad)]>;

// Registration lists every rule's op.
// CHECK-LABEL: static void registerGeneratedGradients(MLIRContext *context) {
// CHECK-NEXT:   attachGradientModels<SigmoidOp,
// CHECK-NEXT:                        LeakyReluOp,
// CHECK-NEXT:                        WhereOp>(context);

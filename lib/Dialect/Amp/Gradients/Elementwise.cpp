//===- Elementwise.cpp - gradient rules of the elementwise ops ------------===//
//
// d(loss)/d(operand) of the unary, broadcasting binary, select and cast ops.
// Broadcast operands get their gradient summed back to their own shape. The
// one-line rules are records in ElementwiseRules.td, generated into C++ by
// amp-tblgen; the ones below branch on attributes or have optional or
// variadic operands.
//
//===----------------------------------------------------------------------===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/IR/AmpShapeInference.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

namespace mlir::amp::gradients {

#define GEN_GRADIENT_RULES
#include "ElementwiseRules.inc"

void gradient(GeluOp op, GradientBuilder &gb, In rg, Grads og) {
  bool tanhApprox = op.getApproximate() == "tanh";
  Value x = op.getX(), g = rg[0];
  og[0] = [&]() -> Value {
    auto c = [&](double v) { return gb.scalar(x, v); };
    if (!tanhApprox) {
      // Phi(x) + x phi(x), Phi(x) = (1 + erf(x/sqrt2))/2.
      Value cdf = gb.mulScalar(
          gb.add(c(1.0), gb.create<ErfOp>({gb.mulScalar(x, M_SQRT1_2)})), 0.5);
      Value pdf = gb.mulScalar(
          gb.create<ExpOp>({gb.mulScalar(gb.mul(x, x), -0.5)}),
          1.0 / std::sqrt(2.0 * M_PI));
      return gb.mul(g, gb.add(cdf, gb.mul(x, pdf)));
    }
    // y = x/2 (1 + tanh(u)), u = k (x + 0.044715 x^3), k = sqrt(2/pi).
    double k = std::sqrt(2.0 / M_PI);
    Value x2 = gb.mul(x, x);
    Value u = gb.mulScalar(gb.add(x, gb.mulScalar(gb.mul(x2, x), 0.044715)), k);
    Value t = gb.create<TanhOp>({u});
    Value du = gb.mulScalar(gb.add(c(1.0), gb.mulScalar(x2, 3 * 0.044715)), k);
    Value left = gb.mulScalar(gb.add(c(1.0), t), 0.5);
    Value right = gb.mul(gb.mulScalar(x, 0.5),
                         gb.mul(gb.sub(c(1.0), gb.mul(t, t)), du));
    return gb.mul(g, gb.add(left, right));
  }();
}
void gradient(SumOp op, GradientBuilder &gb, In rg, Grads og) {
  for (auto [i, input] : llvm::enumerate(op.getData_0()))
    og[i] = gb.sumToShape(rg[0], input);
}
void gradient(MeanOp op, GradientBuilder &gb, In rg, Grads og) {
  double share = 1.0 / static_cast<double>(op.getData_0().size());
  for (auto [i, input] : llvm::enumerate(op.getData_0()))
    og[i] = gb.sumToShape(gb.mulScalar(rg[0], share), input);
}

namespace {
/// Max/Min: the gradient goes to the operands equal to the result, split
/// evenly between ties (PyTorch's maximum/minimum split a tie of two the
/// same way).
template <typename OpT>
void selectionGradient(OpT op, GradientBuilder &gb, In rg, Grads og) {
  Value y = op.getResult(), g = rg[0];
  SmallVector<Value> picked;
  Value count;
  for (Value input : op.getData_0()) {
    Value hit = gb.castLike(gb.create<EqualOp>({input, y}), g);
    picked.push_back(hit);
    count = count ? gb.add(count, hit) : hit;
  }
  Value share = gb.div(g, count);
  for (auto [i, input] : llvm::enumerate(op.getData_0()))
    og[i] = gb.sumToShape(gb.mul(share, picked[i]), input);
}
} // namespace

void gradient(MaxOp op, GradientBuilder &gb, In rg, Grads og) {
  selectionGradient(op, gb, rg, og);
}
void gradient(MinOp op, GradientBuilder &gb, In rg, Grads og) {
  selectionGradient(op, gb, rg, og);
}
bool isDifferentiable(ClipOp op, unsigned index, Overload) {
  return index == 0 &&
         isa<FloatType>(tensorType(op.getInput()).getElementType());
}
void gradient(ClipOp op, GradientBuilder &gb, In rg, Grads og) {
  // Passes where min <= x <= max.
  Value x = op.getInput(), pass;
  auto both = [&](Value cond) {
    pass = pass ? gb.create<AndOp>({pass, cond}) : cond;
  };
  if (!isa<NoneType>(op.getMin().getType()))
    both(gb.create<GreaterOrEqualOp>({x, op.getMin()}));
  if (!isa<NoneType>(op.getMax().getType()))
    both(gb.create<LessOrEqualOp>({x, op.getMax()}));
  og[0] = pass ? gb.create<WhereOp>({pass, rg[0], gb.scalar(x, 0.0)}) : rg[0];
}
bool isDifferentiable(CastOp op, unsigned index, Overload) {
  return isa<FloatType>(tensorType(op.getInput()).getElementType()) &&
         isa<FloatType>(tensorType(op.getOutput()).getElementType());
}
void gradient(CastOp op, GradientBuilder &gb, In rg, Grads og) {
  og[0] = gb.castLike(rg[0], op.getInput());
}
bool isDifferentiable(DropoutOp, unsigned index, Overload) {
  return index == 0;
}
void gradient(DropoutOp op, GradientBuilder &gb, In rg, Grads og) {
  // Only the identity case: the train-step builder turns a training-mode
  // Dropout into amp.dropout_mask and a Where first (lib/Training).
  auto isFalse = [](Value v) {
    auto values = getConstantIntValues(v);
    return isa<NoneType>(v.getType()) ||
           (values && llvm::all_of(*values, [](int64_t b) { return !b; }));
  };
  if (!isFalse(op.getTrainingMode())) {
    gb.fail("a training-mode Dropout must first become a seeded mask "
            "(amp-opt --train does this)");
    return;
  }
  og[0] = rg[0];
}

void registerElementwiseGradients(MLIRContext *context) {
  registerGeneratedGradients(context);
  attachGradientModels<GeluOp, SumOp, MeanOp, MaxOp, MinOp, ClipOp, CastOp,
                       DropoutOp>(context);
}

} // namespace mlir::amp::gradients

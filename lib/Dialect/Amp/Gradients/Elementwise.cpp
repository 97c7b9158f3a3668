//===- Elementwise.cpp - gradient rules of the elementwise ops ------------===//
//
// d(loss)/d(operand) of the unary, broadcasting binary, select and cast ops.
// Broadcast operands get their gradient summed back to their own shape.
//
//===----------------------------------------------------------------------===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/IR/AmpShapeInference.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

namespace mlir::amp::gradients {
namespace {
/// grad * dY/dX for the unary ops, from X, Y and the incoming gradient.
void unary(GradientBuilder &gb, In rg, Grads og,
           llvm::function_ref<Value(Value x, Value y, Value g)> rule) {
  Operation *op = gb.getForward();
  og[0] = rule(op->getOperand(0), op->getResult(0), rg[0]);
}
} // namespace

void gradient(IdentityOp, GradientBuilder &, In rg, Grads og) {
  og[0] = rg[0];
}
void gradient(NegOp, GradientBuilder &gb, In rg, Grads og) {
  og[0] = gb.neg(rg[0]);
}
void gradient(ReluOp, GradientBuilder &gb, In rg, Grads og) {
  // Zero where y <= 0, else g (a NaN gradient passes, as in PyTorch).
  unary(gb, rg, og, [&](Value, Value y, Value g) {
    Value zero = gb.scalar(y, 0.0);
    return gb.create<WhereOp>({gb.create<LessOrEqualOp>({y, zero}), zero, g});
  });
}
void gradient(LeakyReluOp op, GradientBuilder &gb, In rg, Grads og) {
  double alpha = op.getAlpha().convertToDouble();
  unary(gb, rg, og, [&](Value x, Value, Value g) {
    Value positive = gb.create<GreaterOp>({x, gb.scalar(x, 0.0)});
    return gb.create<WhereOp>({positive, g, gb.mulScalar(g, alpha)});
  });
}
void gradient(SigmoidOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value, Value y, Value g) {
    return gb.mul(g, gb.mul(y, gb.sub(gb.scalar(y, 1.0), y)));
  });
}
void gradient(TanhOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value, Value y, Value g) {
    return gb.mul(g, gb.sub(gb.scalar(y, 1.0), gb.mul(y, y)));
  });
}
void gradient(ExpOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value, Value y, Value g) { return gb.mul(g, y); });
}
void gradient(LogOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value x, Value, Value g) { return gb.div(g, x); });
}
void gradient(SqrtOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value, Value y, Value g) {
    return gb.div(g, gb.mulScalar(y, 2.0));
  });
}
void gradient(ReciprocalOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value, Value y, Value g) {
    return gb.neg(gb.mul(g, gb.mul(y, y)));
  });
}
void gradient(AbsOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value x, Value, Value g) {
    return gb.mul(g, gb.create<SignOp>({x}));
  });
}
void gradient(SinOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value x, Value, Value g) {
    return gb.mul(g, gb.create<CosOp>({x}));
  });
}
void gradient(CosOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value x, Value, Value g) {
    return gb.neg(gb.mul(g, gb.create<SinOp>({x})));
  });
}
void gradient(SoftplusOp, GradientBuilder &gb, In rg, Grads og) {
  unary(gb, rg, og, [&](Value x, Value, Value g) {
    return gb.mul(g, gb.create<SigmoidOp>({x}));
  });
}
void gradient(ErfOp, GradientBuilder &gb, In rg, Grads og) {
  // d erf(x) = 2/sqrt(pi) exp(-x^2).
  unary(gb, rg, og, [&](Value x, Value, Value g) {
    Value e = gb.create<ExpOp>({gb.neg(gb.mul(x, x))});
    return gb.mul(g, gb.mulScalar(e, 2.0 / std::sqrt(M_PI)));
  });
}
void gradient(GeluOp op, GradientBuilder &gb, In rg, Grads og) {
  bool tanhApprox = op.getApproximate() == "tanh";
  unary(gb, rg, og, [&](Value x, Value, Value g) -> Value {
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
  });
}
void gradient(HardSigmoidOp op, GradientBuilder &gb, In rg, Grads og) {
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  unary(gb, rg, og, [&](Value x, Value, Value g) {
    // alpha inside (0, 1) of alpha x + beta, else 0.
    Value lin = gb.add(gb.mulScalar(x, alpha), gb.scalar(x, beta));
    Value inside = gb.create<AndOp>({gb.create<GreaterOp>({lin, gb.scalar(x, 0)}),
                                     gb.create<LessOp>({lin, gb.scalar(x, 1)})});
    return gb.create<WhereOp>(
        {inside, gb.mulScalar(g, alpha), gb.scalar(x, 0.0)});
  });
}
void gradient(HardSwishOp, GradientBuilder &gb, In rg, Grads og) {
  // y = x relu6(x + 3) / 6: dy = 0 (x < -3), x/3 + 1/2 (|x| <= 3), 1 (x > 3).
  unary(gb, rg, og, [&](Value x, Value, Value g) {
    Value mid = gb.add(gb.mulScalar(x, 1.0 / 3.0), gb.scalar(x, 0.5));
    Value d = gb.create<WhereOp>({gb.create<LessOp>({x, gb.scalar(x, -3.0)}),
                                  gb.scalar(x, 0.0), mid});
    d = gb.create<WhereOp>(
        {gb.create<GreaterOp>({x, gb.scalar(x, 3.0)}), gb.scalar(x, 1.0), d});
    return gb.mul(g, d);
  });
}

void gradient(AddOp op, GradientBuilder &gb, In rg, Grads og) {
  og[0] = gb.sumToShape(rg[0], op.getA());
  og[1] = gb.sumToShape(rg[0], op.getB());
}
void gradient(SubOp op, GradientBuilder &gb, In rg, Grads og) {
  og[0] = gb.sumToShape(rg[0], op.getA());
  og[1] = gb.sumToShape(gb.neg(rg[0]), op.getB());
}
void gradient(MulOp op, GradientBuilder &gb, In rg, Grads og) {
  og[0] = gb.sumToShape(gb.mul(rg[0], op.getB()), op.getA());
  og[1] = gb.sumToShape(gb.mul(rg[0], op.getA()), op.getB());
}
void gradient(DivOp op, GradientBuilder &gb, In rg, Grads og) {
  Value gOverB = gb.div(rg[0], op.getB());
  og[0] = gb.sumToShape(gOverB, op.getA());
  // d(a/b)/db = -(a/b)/b.
  og[1] = gb.sumToShape(gb.neg(gb.mul(gOverB, op.getC())), op.getB());
}
bool isDifferentiable(PowOp, unsigned index, Overload) { return index == 0; }
void gradient(PowOp op, GradientBuilder &gb, In rg, Grads og) {
  // d x^y / dx = y x^(y-1); the exponent is treated as a constant.
  Value x = op.getX();
  Value y = gb.castLike(op.getY(), x);
  Value ym1 = gb.sub(y, gb.scalar(x, 1.0));
  og[0] = gb.sumToShape(
      gb.mul(rg[0], gb.mul(y, gb.create<PowOp>({x, ym1}))), x);
}
void gradient(SumOp op, GradientBuilder &gb, In rg, Grads og) {
  for (auto [i, input] : llvm::enumerate(op.getData_0()))
    og[i] = gb.sumToShape(rg[0], input);
}
bool isDifferentiable(WhereOp, unsigned index, Overload) { return index > 0; }
void gradient(WhereOp op, GradientBuilder &gb, In rg, Grads og) {
  Value zero = gb.scalar(rg[0], 0.0);
  og[1] = gb.sumToShape(
      gb.create<WhereOp>({op.getCondition(), rg[0], zero}), op.getX());
  og[2] = gb.sumToShape(
      gb.create<WhereOp>({op.getCondition(), zero, rg[0]}), op.getY());
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
  attachGradientModels<IdentityOp, NegOp, ReluOp, LeakyReluOp, SigmoidOp,
                       TanhOp, ExpOp, LogOp, SqrtOp, ReciprocalOp, AbsOp,
                       SinOp, CosOp, SoftplusOp, ErfOp, GeluOp, HardSigmoidOp,
                       HardSwishOp, AddOp, SubOp, MulOp, DivOp, PowOp, SumOp,
                       WhereOp, ClipOp, CastOp, DropoutOp>(context);
}

} // namespace mlir::amp::gradients

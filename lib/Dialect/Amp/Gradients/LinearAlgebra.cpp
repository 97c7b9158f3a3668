//===- LinearAlgebra.cpp - gradient rules of Gemm, MatMul and Einsum ------===//
//
// The backward GEMMs are Gemm/MatMul ops again, with the transposes folded
// into Gemm's transA/transB, so backends run them on the same GEMM path
// (oneDNN on the CPU, cuBLASLt on the GPU) as the forward ones.
//
//===----------------------------------------------------------------------===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/Semantics/Einsum.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

namespace mlir::amp::gradients {
void gradient(GemmOp op, GradientBuilder &gb, In rg, Grads og) {
  // Y = alpha op(A) op(B) + beta C.
  Value a = op.getA(), b = op.getB(), g = rg[0];
  bool ta = op.getTransA() != 0, tb = op.getTransB() != 0;
  float alpha = op.getAlpha().convertToFloat();
  float beta = op.getBeta().convertToFloat();
  auto gemm = [&](Value x, Value y, bool transX, bool transY) {
    SmallVector<NamedAttribute> attrs{gb.attr("transA", int64_t(transX)),
                                      gb.attr("transB", int64_t(transY))};
    if (alpha != 1.0f)
      attrs.push_back(gb.attr("alpha", alpha));
    return gb.create<GemmOp>({x, y, gb.none()}, attrs);
  };
  if (!ta && !tb) {
    og[0] = gemm(g, b, false, true);  // g B^T
    og[1] = gemm(a, g, true, false);  // A^T g
  } else if (!ta && tb) {
    og[0] = gemm(g, b, false, false); // g B
    og[1] = gemm(g, a, true, false);  // g^T A
  } else if (ta && !tb) {
    og[0] = gemm(b, g, false, true);  // B g^T
    og[1] = gemm(a, g, false, false); // A g
  } else {
    og[0] = gemm(b, g, true, true);   // B^T g^T
    og[1] = gemm(g, a, true, true);   // g^T A^T
  }
  if (!isa<NoneType>(op.getC().getType()))
    og[2] = gb.sumToShape(gb.mulScalar(g, beta), op.getC());
}

void gradient(MatMulOp op, GradientBuilder &gb, In rg, Grads og) {
  // numpy matmul: 1-D operands are promoted to matrices and the added
  // dimension is removed from the result; batch dimensions broadcast.
  Value a = op.getA(), b = op.getB(), g = rg[0];
  int64_t rankA = tensorType(a).getRank(), rankB = tensorType(b).getRank();
  Value a2 = a, b2 = b, g2 = g;
  if (rankA == 1) {
    a2 = gb.create<UnsqueezeOp>({a, gb.i64s({0})});
    g2 = gb.create<UnsqueezeOp>({g2, gb.i64s({rankB == 1 ? 0 : -2})});
  }
  if (rankB == 1) {
    b2 = gb.create<UnsqueezeOp>({b, gb.i64s({1})});
    g2 = gb.create<UnsqueezeOp>({g2, gb.i64s({-1})});
  }
  auto swapLast = [&](Value v) {
    int64_t rank = tensorType(v).getRank();
    SmallVector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i)
      perm[i] = i;
    std::swap(perm[rank - 1], perm[rank - 2]);
    return gb.transpose(v, perm);
  };
  Value ga = gb.create<MatMulOp>({g2, swapLast(b2)});
  Value gB = gb.create<MatMulOp>({swapLast(a2), g2});
  og[0] = gb.reshapeLike(gb.sumToShape(ga, a2), a);
  og[1] = gb.reshapeLike(gb.sumToShape(gB, b2), b);
}

void gradient(EinsumOp op, GradientBuilder &gb, In rg, Grads og) {
  // The gradient of operand i is the Einsum of dY and the other operands
  // onto operand i's letters; letters only operand i has (summed in the
  // forward) are broadcast back, and size-1 dimensions that broadcast in
  // the forward are summed back.
  SmallVector<int64_t> ranks;
  for (Value input : op.getInputs())
    ranks.push_back(tensorType(input).getRank());
  auto equation = semantics::resolveEinsum(
      op.getEquation(), ranks, [&](const Twine &message) { gb.fail(message); });
  if (failed(equation))
    return;
  const SmallVector<std::string> &terms = equation->inputs;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    if (!isa<FloatType>(tensorType(input).getElementType()))
      continue;
    const std::string &term = terms[i];
    auto elsewhere = [&](char c) {
      if (equation->output.find(c) != std::string::npos)
        return true;
      for (auto [j, other] : llvm::enumerate(terms))
        if (j != i && other.find(c) != std::string::npos)
          return true;
      return false;
    };
    std::string target;
    SmallVector<int64_t> summed;
    for (auto [pos, c] : llvm::enumerate(term)) {
      if (term.find(c) != pos || term.rfind(c) != pos) {
        gb.fail("einsum term '" + term + "' repeats an index (a diagonal)");
        return;
      }
      if (elsewhere(c))
        target.push_back(c);
      else
        summed.push_back(static_cast<int64_t>(pos));
    }
    std::string gradEquation = equation->output;
    SmallVector<Value> operands{rg[0]};
    for (auto [j, other] : llvm::enumerate(op.getInputs())) {
      if (j == i)
        continue;
      gradEquation += "," + terms[j];
      operands.push_back(other);
    }
    gradEquation += "->" + target;
    Value grad = gb.create<EinsumOp>(
        operands, {gb.attr("equation", StringRef(gradEquation))});
    if (!summed.empty())
      grad = gb.create<ExpandOp>(
          {gb.create<UnsqueezeOp>({grad, gb.i64s(summed)}),
           gb.shapeOf(input)});
    og[i] = gb.sumToShape(grad, input);
  }
}

void registerLinearAlgebraGradients(MLIRContext *context) {
  attachGradientModels<GemmOp, MatMulOp, EinsumOp>(context);
}

} // namespace mlir::amp::gradients

//===- OpCost.cpp - rough cost model for autocast reports -----------------===//

#include "OpCost.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::amp;

int64_t mlir::amp::getStaticElementCount(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  int64_t count = 1;
  for (int64_t dim : tensor.getShape())
    count *= ShapedType::isDynamic(dim) ? 1 : dim;
  return count;
}

static ArrayRef<int64_t> shapeOf(Value value) {
  if (auto tensor = dyn_cast<RankedTensorType>(value.getType()))
    return tensor.getShape();
  return {};
}

static int64_t dimOr1(int64_t dim) {
  return ShapedType::isDynamic(dim) ? 1 : dim;
}

static double resultElements(Operation *op) {
  double total = 0;
  for (Type type : op->getResultTypes())
    total += static_cast<double>(getStaticElementCount(type));
  return total;
}

/// 2 * (output elements) * (reduction size).
static double matmulFlops(Value lhs, Value result, bool transposedLhs) {
  ArrayRef<int64_t> a = shapeOf(lhs);
  if (a.empty())
    return 0;
  int64_t k = a.size() == 1 ? a[0] : (transposedLhs ? a[0] : a.back());
  return 2.0 * getStaticElementCount(result.getType()) * dimOr1(k);
}

static double einsumFlops(EinsumOp op) {
  // Product of the sizes of all distinct labels, times 2.
  StringRef equation = op.getEquation();
  StringRef inputs = equation.split("->").first;
  llvm::StringMap<int64_t> sizes;
  SmallVector<StringRef> terms;
  inputs.split(terms, ',');
  for (auto [term, operand] : llvm::zip(terms, op.getInputs())) {
    ArrayRef<int64_t> shape = shapeOf(operand);
    term = term.trim();
    size_t dim = 0;
    for (char label : term) {
      if (label == '.' || dim >= shape.size())
        break;
      sizes[StringRef(&label, 1)] = dimOr1(shape[dim++]);
    }
  }
  double total = 2.0;
  for (auto &entry : sizes)
    total *= entry.second;
  return total;
}

/// 2 * (elements of `perElementOf`) * (weight dims after the first).
static double convFlops(Value weight, Value perElementOf) {
  ArrayRef<int64_t> shape = shapeOf(weight);
  double product = 1;
  for (int64_t dim : shape.empty() ? shape : shape.drop_front())
    product *= dimOr1(dim);
  return 2.0 * getStaticElementCount(perElementOf.getType()) * product;
}

double mlir::amp::estimateFlops(Operation *op) {
  return llvm::TypeSwitch<Operation *, double>(op)
      .Case([](MatMulOp matmul) {
        return matmulFlops(matmul.getA(), matmul.getY(), false);
      })
      .Case([](GemmOp gemm) {
        return matmulFlops(gemm.getA(), gemm.getY(), gemm.getTransA() != 0);
      })
      .Case([](ConvOp conv) {
        // Every output element sums C_in/group * kernel products.
        return convFlops(conv.getW(), conv.getY());
      })
      .Case([](ConvTransposeOp conv) {
        // Every input element is scattered through C_out/group * kernel.
        return convFlops(conv.getW(), conv.getX());
      })
      .Case([](EinsumOp einsum) { return einsumFlops(einsum); })
      .Case([](AttentionOp attention) {
        // QK^T and PV: 2 * 2 * (Q elements) * kv length.
        ArrayRef<int64_t> k = shapeOf(attention.getK());
        int64_t kvLength = k.size() >= 2 ? dimOr1(k[k.size() - 2]) : 1;
        return 4.0 * getStaticElementCount(attention.getQ().getType()) *
               kvLength;
      })
      .Default([](Operation *other) { return resultElements(other); });
}

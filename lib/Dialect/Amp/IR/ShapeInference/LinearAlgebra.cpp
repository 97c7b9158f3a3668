//===- LinearAlgebra.cpp - shape rules: MatMul, Gemm, Einsum and Det ------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferMatMul(InferenceContext &ctx, Types &results) {
  auto lhs = requireTensor(ctx, 0);
  auto rhs = requireTensor(ctx, 1);
  if (failed(lhs) || failed(rhs) || failed(requireSameElementTypes(ctx, 0, 2)))
    return failure();
  auto dims = semantics::resolveMatMulDims(lhs->getShape(), rhs->getShape(),
                                           ctx.getErrorFn());
  if (failed(dims))
    return failure();
  results.push_back(tensorOf(dims->getResultShape(), lhs->getElementType()));
  return success();
}

LogicalResult shape::inferGemm(InferenceContext &ctx,
                               const semantics::GemmAttrs &attrs,
                               Types &results) {
  auto lhs = requireTensor(ctx, 0);
  auto rhs = requireTensor(ctx, 1);
  if (failed(lhs) || failed(rhs) || failed(requireSameElementTypes(ctx, 0, 3)))
    return failure();
  if (lhs->getRank() != 2 || rhs->getRank() != 2)
    return ctx.emitError("Gemm operands A and B must be 2-d");
  auto dims = semantics::resolveGemmDims(lhs->getShape(), rhs->getShape(),
                                         attrs, ctx.getErrorFn());
  if (failed(dims))
    return failure();
  SmallVector<int64_t> shape = {dims->m, dims->n};
  if (RankedTensorType c = ctx.getTensorType(2)) {
    if (c.getRank() > 2 || !semantics::broadcastShapes(shape, c.getShape()))
      return ctx.emitError("Gemm operand C does not broadcast to (M, N)");
  }
  results.push_back(tensorOf(shape, lhs->getElementType()));
  return success();
}

LogicalResult shape::inferEinsum(InferenceContext &ctx, StringRef equationAttr,
                                 Types &results) {
  std::string equation;
  for (char c : equationAttr)
    if (c != ' ')
      equation.push_back(c);
  // Letters index the maps below: any other byte (0xff is DenseMap's empty
  // key) is refused first.
  for (char c : equation)
    if (!llvm::isAlpha(c) && !StringRef(",->.").contains(c))
      return ctx.emitError(
          "einsum equation has the character 0x" +
          llvm::utohexstr(static_cast<unsigned char>(c)) +
          "; only letters, ',', '->' and '...' are allowed");
  if (ctx.getNumOperands() == 0 || failed(requireTensor(ctx, 0)) ||
      failed(requireSameElementTypes(ctx, 0, ctx.getNumOperands())))
    return failure();
  StringRef eq(equation);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ctx.getNumOperands())
    return ctx.emitError("einsum equation has " + llvm::Twine(terms.size()) +
                         " input terms for " +
                         llvm::Twine(ctx.getNumOperands()) + " operands");
  llvm::DenseMap<char, int64_t> letterSize;
  llvm::DenseMap<char, int> letterCount;
  SmallVector<int64_t> ellipsisShape;
  for (auto [index, term] : llvm::enumerate(terms)) {
    if (failed(requireTensor(ctx, index)))
      return failure();
    ArrayRef<int64_t> dims = ctx.getTensorType(index).getShape();
    size_t ellipsis = term.find("...");
    size_t letters = term.size() - (ellipsis == StringRef::npos ? 0 : 3);
    if (letters > dims.size() ||
        (ellipsis == StringRef::npos && letters != dims.size()))
      return ctx.emitError("einsum term '" + term + "' does not match rank " +
                           llvm::Twine(dims.size()));
    size_t ellipsisRank = dims.size() - letters;
    size_t dim = 0;
    for (size_t pos = 0; pos < term.size(); ++pos) {
      if (pos == ellipsis) {
        SmallVector<int64_t> broadcast;
        if (!OpTrait::util::getBroadcastedShape(
                ellipsisShape, dims.slice(dim, ellipsisRank), broadcast))
          return ctx.emitError("einsum ellipsis dimensions do not broadcast");
        ellipsisShape = std::move(broadcast);
        dim += ellipsisRank;
        pos += 2;
        continue;
      }
      char letter = term[pos];
      if (!llvm::isAlpha(letter))
        return ctx.emitError("invalid einsum equation '" + eq + "'");
      int64_t size = dims[dim++];
      auto [it, inserted] = letterSize.try_emplace(letter, size);
      if (!inserted && ShapedType::isDynamic(it->second))
        it->second = size;
      else if (!inserted && !ShapedType::isDynamic(size) &&
               it->second != size && it->second != 1 && size != 1)
        return ctx.emitError("einsum index '" + llvm::Twine(letter) +
                             "' has sizes " + llvm::Twine(it->second) +
                             " and " + llvm::Twine(size));
      else if (!inserted && it->second == 1)
        it->second = size;
      ++letterCount[letter];
    }
  }
  std::string output;
  if (explicitOutput) {
    output = rhs.str();
  } else {
    output = "...";
    SmallVector<char> singles;
    for (auto [letter, count] : letterCount)
      if (count == 1)
        singles.push_back(letter);
    llvm::sort(singles);
    output.append(singles.begin(), singles.end());
  }
  SmallVector<int64_t> shape;
  for (size_t pos = 0; pos < output.size(); ++pos) {
    if (StringRef(output).substr(pos).starts_with("...")) {
      shape.append(ellipsisShape.begin(), ellipsisShape.end());
      pos += 2;
      continue;
    }
    auto it = letterSize.find(output[pos]);
    if (it == letterSize.end())
      return ctx.emitError("einsum output index '" + llvm::Twine(output[pos]) +
                           "' does not appear in the inputs");
    shape.push_back(it->second);
  }
  results.push_back(tensorOf(shape, ctx.getTensorType(0).getElementType()));
  return success();
}

LogicalResult shape::inferDet(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  if (rank < 2 || failed(checkContraction(ctx, x->getDimSize(rank - 1),
                                          x->getDimSize(rank - 2))))
    return ctx.emitError("Det expects square matrices in the last two "
                         "dimensions");
  results.push_back(tensorOf(x->getShape().drop_back(2), x->getElementType()));
  return success();
}

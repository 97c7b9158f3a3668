//===- Attention.cpp - shape rules: Attention -----------------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferAttention(InferenceContext &ctx,
                                    std::optional<int64_t> qNumHeads,
                                    std::optional<int64_t> kvNumHeads,
                                    Types &results) {
  auto q = requireTensor(ctx, 0);
  auto k = requireTensor(ctx, 1);
  auto v = requireTensor(ctx, 2);
  if (failed(q) || failed(k) || failed(v))
    return failure();
  int64_t rank = q->getRank();
  if ((rank != 3 && rank != 4) || k->getRank() != rank || v->getRank() != rank)
    return ctx.emitError("Attention expects Q, K and V all 3-d or all 4-d");
  int64_t batch = q->getDimSize(0);
  int64_t qHeads, kvHeads, querySeq, kvSeq, headSize, valueHeadSize;
  if (rank == 4) {
    qHeads = q->getDimSize(1);
    kvHeads = k->getDimSize(1);
    querySeq = q->getDimSize(2);
    kvSeq = k->getDimSize(2);
    headSize = q->getDimSize(3);
    valueHeadSize = v->getDimSize(3);
  } else {
    std::optional<int64_t> qh = qNumHeads, kvh = kvNumHeads;
    if (!qh || !kvh || *qh <= 0 || *kvh <= 0)
      return ctx.emitError("3-d Attention needs q_num_heads and kv_num_heads");
    qHeads = *qh;
    kvHeads = *kvh;
    querySeq = q->getDimSize(1);
    kvSeq = k->getDimSize(1);
    auto perHead = [](int64_t d, int64_t heads) {
      return ShapedType::isDynamic(d) ? kDynamic : d / heads;
    };
    headSize = perHead(q->getDimSize(2), qHeads);
    valueHeadSize = perHead(v->getDimSize(2), kvHeads);
  }
  int64_t totalSeq = kvSeq;
  if (RankedTensorType past = ctx.getTensorType(4)) {
    if (past.getRank() != 4)
      return ctx.emitError("Attention past_key must be 4-d");
    int64_t pastSeq = past.getDimSize(2);
    totalSeq = ShapedType::isDynamic(pastSeq) || ShapedType::isDynamic(kvSeq)
                   ? kDynamic
                   : pastSeq + kvSeq;
  }
  Type elementType = q->getElementType();
  if (rank == 4)
    results.push_back(
        tensorOf({batch, qHeads, querySeq, valueHeadSize}, elementType));
  else
    results.push_back(tensorOf(
        {batch, querySeq, mulDims(qHeads, valueHeadSize)}, elementType));
  results.push_back(
      tensorOf({batch, kvHeads, totalSeq, headSize}, k->getElementType()));
  results.push_back(
      tensorOf({batch, kvHeads, totalSeq, valueHeadSize}, v->getElementType()));
  results.push_back(tensorOf({batch, qHeads, querySeq, totalSeq}, elementType));
  return success();
}

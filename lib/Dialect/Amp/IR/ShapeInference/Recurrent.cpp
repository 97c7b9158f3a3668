//===- Recurrent.cpp - shape rules: RNN, GRU and LSTM ---------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

/// Y and Y_h of RNN/GRU/LSTM.
LogicalResult shape::inferRecurrent(InferenceContext &ctx, StringRef direction,
                                    std::optional<int64_t> hiddenSize,
                                    int64_t layout, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto r = requireTensor(ctx, 2);
  if (failed(x) || failed(requireTensor(ctx, 1)) || failed(r))
    return failure();
  if (x->getRank() != 3 || r->getRank() != 3)
    return ctx.emitError("recurrent ops expect 3-d X and R");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return ctx.emitError("unknown direction '" + direction + "'");
  int64_t directions = direction == "bidirectional" ? 2 : 1;
  int64_t hidden = hiddenSize.value_or(r->getDimSize(2));
  bool batchFirst = layout == 1;
  int64_t seq = x->getDimSize(batchFirst ? 1 : 0);
  int64_t batch = x->getDimSize(batchFirst ? 0 : 1);
  Type elementType = x->getElementType();
  if (batchFirst) {
    results.push_back(tensorOf({batch, seq, directions, hidden}, elementType));
    results.push_back(tensorOf({batch, directions, hidden}, elementType));
  } else {
    results.push_back(tensorOf({seq, directions, batch, hidden}, elementType));
    results.push_back(tensorOf({directions, batch, hidden}, elementType));
  }
  return success();
}

/// LSTM adds Y_c, shaped like Y_h.
LogicalResult shape::inferLSTM(InferenceContext &ctx, StringRef direction,
                               std::optional<int64_t> hiddenSize,
                               int64_t layout, Types &results) {
  if (failed(inferRecurrent(ctx, direction, hiddenSize, layout, results)))
    return failure();
  results.push_back(results.back());
  return success();
}

//===- BatchOrder.cpp - which samples each training step reads ------------===//

#include "amp/Runtime/BatchOrder.h"

#include <cstring>
#include <random>

namespace amp_runtime {

std::vector<int64_t> epochOrder(int64_t count, uint64_t seed, int64_t epoch,
                                bool shuffle) {
  std::vector<int64_t> order(count);
  for (int64_t i = 0; i < count; ++i)
    order[i] = i;
  if (!shuffle)
    return order;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + epoch + 1);
  for (int64_t i = count - 1; i > 0; --i)
    std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
  return order;
}

std::vector<int64_t> BatchSchedule::rows(int64_t batch, int rank, int ranks) {
  int64_t perEpoch = batchesPerEpoch();
  int64_t epoch = batch / perEpoch, offset = batch % perEpoch;
  if (epoch != cachedEpoch) {
    order = epochOrder(samples, seed, epoch, shuffle);
    cachedEpoch = epoch;
  }
  int64_t shard = globalBatch / ranks;
  auto first = order.begin() + offset * globalBatch + rank * shard;
  return std::vector<int64_t>(first, first + shard);
}

Tensor gatherRows(const Tensor &data, const std::vector<int64_t> &rows) {
  Tensor batch;
  batch.elementType = data.elementType;
  batch.shape = data.shape;
  batch.shape[0] = static_cast<int64_t>(rows.size());
  size_t rowBytes = data.shape[0] ? data.bytes.size() / data.shape[0] : 0;
  batch.bytes.resize(rowBytes * rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(batch.bytes.data() + i * rowBytes,
                data.bytes.data() + rows[i] * rowBytes, rowBytes);
  return batch;
}

} // namespace amp_runtime

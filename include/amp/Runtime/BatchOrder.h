//===- BatchOrder.h - which samples each training step reads ----*- C++ -*-===//
//
// The order amp's training drivers read a data set in (amp-run --train and
// the GPU driver amp-train-gpu share it, so both backends see the same
// batches): per epoch a permutation of the samples (the identity without
// shuffling), cut into global batches, each split evenly over the ranks.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_BATCHORDER_H
#define AMP_RUNTIME_BATCHORDER_H

#include "amp/Runtime/HostTensor.h"

#include <cstdint>
#include <vector>

namespace amp_runtime {

/// The permutation of epoch `epoch` (Fisher-Yates over a per-epoch seed).
std::vector<int64_t> epochOrder(int64_t count, uint64_t seed, int64_t epoch,
                                bool shuffle);

/// Global batches of `globalBatch` rows over `samples` samples; an epoch is
/// `samples / globalBatch` batches (the last partial one is dropped).
class BatchSchedule {
public:
  BatchSchedule(int64_t samples, int64_t globalBatch, uint64_t seed,
                bool shuffle)
      : samples(samples), globalBatch(globalBatch), seed(seed),
        shuffle(shuffle) {}
  int64_t batchesPerEpoch() const { return samples / globalBatch; }
  /// Rank `rank`'s rows (of `ranks`, an even share) of global batch number
  /// `batch`, counted from the start of training.
  std::vector<int64_t> rows(int64_t batch, int rank = 0, int ranks = 1);

private:
  int64_t samples, globalBatch;
  uint64_t seed;
  bool shuffle;
  int64_t cachedEpoch = -1;
  std::vector<int64_t> order;
};

/// Rows `rows` of `data` (samples along dimension 0), as one tensor.
Tensor gatherRows(const Tensor &data, const std::vector<int64_t> &rows);

} // namespace amp_runtime

#endif // AMP_RUNTIME_BATCHORDER_H

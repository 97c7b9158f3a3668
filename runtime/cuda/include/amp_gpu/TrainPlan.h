//===- TrainPlan.h - a split train step's artifacts, matched ----*- C++ -*-===//
//
// Data-parallel training on GPUs runs three artifacts of one train program
// (amp-opt --train --split-step --amp-target=cuda --amp-cuda-entry=...):
// @initial_state (no inputs: the starting state), @compute_gradients
// (forward + backward of one micro-batch, accumulating) and
// @apply_gradients (the optimizer and the loss scaler). planTraining
// matches their signatures by name (the names amp's train step gives:
// "<param>.grad", "grad_scale", "found_inf", "loss", "labels", ...),
// checks that they belong together, and lays the gradients, the float
// buffers and the loss out in one flat buffer for one all-reduce. Plain
// C++: checked before a device is touched.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_GPU_TRAINPLAN_H
#define AMP_GPU_TRAINPLAN_H

#include "amp_gpu/Artifact.h"

#include <cstdint>
#include <string>
#include <vector>

namespace amp_gpu {

struct TrainPlan {
  /// A tensor carried from step to step: a parameter, a buffer (BatchNorm's
  /// running statistics), an optimizer state, the loss scaler's state or
  /// the step counter. -1 where an artifact does not have it.
  struct State {
    std::string name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    uint64_t bytes = 0;
    int initOutput = -1;
    int computeInput = -1, computeOutput = -1; // parameters, buffers
    int applyInput = -1, applyOutput = -1;     // all but buffers
    /// A float buffer: averaged over the ranks at every step (its place in
    /// the flat buffer's averaged segment, in elements).
    bool averaged = false;
    uint64_t flatOffset = 0;
  };
  /// A parameter's gradient: compute's accumulator input and output,
  /// apply's input, and its place in the flat buffer (elements).
  struct Gradient {
    std::string name;
    uint64_t count = 0, bytes = 0;
    int computeInput = -1, computeOutput = -1, applyInput = -1;
    uint64_t flatOffset = 0;
  };
  std::vector<State> state;
  std::vector<Gradient> gradients;

  /// The flat buffer: [gradients (summed)] [averaged buffers, loss
  /// (averaged)], all of `flatType`.
  DType flatType = DType::F32;
  uint64_t summedCount = 0, averagedCount = 0;
  uint64_t lossOffset = 0; // elements; in the averaged segment
  uint64_t flatBytes() const {
    return (summedCount + averagedCount) * dtypeSize(flatType);
  }

  /// @compute_gradients' other inputs and its loss.
  int dataInput = -1, labelsInput = -1, gradScaleInput = -1;
  int dropoutCounterInput = -1, dropoutReplicaInput = -1;
  int lossOutput = -1;
  /// @apply_gradients' overflow flag in and out, and what it reports.
  int foundInfInput = -1, foundInfOutput = -1, nonfiniteOutput = -1,
      lrOutput = -1;
  /// Indices into `state`: the loss scale (-1 without dynamic scaling) and
  /// the step counter.
  int lossScaleState = -1, stepState = -1;
  /// One micro-batch: the data input's and the labels' first dimension.
  int64_t microBatch = 0;
};

/// Matches the three artifacts (`init` may be null: the state then comes
/// from a file). On a mismatch returns false with `error` naming the
/// tensor and the artifacts.
bool planTraining(const Artifact *init, const Artifact &compute,
                  const Artifact &apply, TrainPlan &plan, std::string &error);

/// How a global batch splits over the ranks: `ranks` equal shards, each
/// one micro-batch of the artifact's `microBatch` rows (with --accumulate
/// K an optimizer step takes K global batches). False with a message when
/// it does not divide or does not match the artifact.
bool checkBatchSplit(int64_t globalBatch, int ranks, int64_t microBatch,
                     std::string &error);

} // namespace amp_gpu

#endif // AMP_GPU_TRAINPLAN_H

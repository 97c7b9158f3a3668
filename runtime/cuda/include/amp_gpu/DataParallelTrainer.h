//===- DataParallelTrainer.h - the split step's training loop ---*- C++ -*-===//
//
// The loop of amp-train-gpu over the three artifacts of a split train step
// (see TrainPlan.h), written once against TrainDevice: the CUDA runtime
// (amp-train-gpu: device memory, NCCL) and the CPU emulation of the
// artifacts (amp-run --train --amp-cuda-emulate: host memory,
// amp_gpu::HostProgram, MPI) implement it, so the loop that a GPU runs is
// the loop the tests run without one. Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_GPU_DATAPARALLELTRAINER_H
#define AMP_GPU_DATAPARALLELTRAINER_H

#include "amp/Runtime/HostTensor.h"
#include "amp_gpu/TrainPlan.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace amp_gpu {

enum class TrainProgram { Init = 0, Compute = 1, Apply = 2 };

/// Where the programs run. Addresses are the device's (host pointers for
/// the emulation); an input's storage keeps its value between executions.
/// Every call returns false with `error` set on failure.
class TrainDevice {
public:
  virtual ~TrainDevice();
  virtual bool address(TrainProgram program, bool output, int index,
                       void *&pointer, std::string &error) = 0;
  virtual bool execute(TrainProgram program, std::string &error) = 0;
  virtual bool copy(void *dst, const void *src, uint64_t bytes,
                    std::string &error) = 0;
  virtual bool zero(void *dst, uint64_t bytes, std::string &error) = 0;
  virtual bool toHost(void *host, const void *src, uint64_t bytes,
                      std::string &error) = 0;
  virtual bool toDevice(void *dst, const void *host, uint64_t bytes,
                        std::string &error) = 0;
  /// Device memory that lives as long as the device.
  virtual bool allocate(uint64_t bytes, void *&pointer, std::string &error) = 0;
  /// Whether there is a collective (several ranks, or one forced).
  virtual bool hasCollective() const = 0;
  /// In place over the ranks: elements [0, summed) of `flat` summed, the
  /// next `averaged` averaged.
  virtual bool allReduce(void *flat, DType type, uint64_t summed,
                         uint64_t averaged, std::string &error) = 0;
};

struct TrainRunOptions {
  int64_t batchSize = 0, accumulate = 1, steps = 0, logEvery = 10;
  int64_t replicaIndex = 0;
  uint64_t shuffleSeed = 0;
  bool shuffle = true;
  int rank = 0, ranks = 1;
  /// Rank 0's CSV log (step,loss,loss_scale,lr,found_inf,skipped); written
  /// as FILE.partial and renamed at the end.
  std::string logCsv;
  /// Rank 0's progress lines (amp-run --train's).
  std::function<void(const std::string &)> log;
};

struct TrainRunResult {
  int64_t skipped = 0;
  double finalScale = 1;
  /// Seconds spent in the all-reduce (waiting for the slowest rank
  /// included), and its bytes per step.
  double allReduceSeconds = 0;
  uint64_t allReduceBytes = 0;
  /// Global batches consumed (a state file's amp_run.batches_done).
  int64_t batchesDone = 0;
};

/// Reads a data or labels file and checks its rows against the compute
/// artifact's input `sig` (f32 files feed bf16 inputs).
bool readTrainingData(const std::string &path, const TensorSignature &sig,
                      amp_runtime::Tensor &tensor, std::string &error);

/// Puts the starting state into both programs: from the @initial_state
/// program when `loaded` is empty, else from `loaded` (per plan.state, in
/// the state's bytes).
bool loadStartingState(const TrainPlan &plan, TrainDevice &device,
                       const std::vector<std::vector<char>> &loaded,
                       std::string &error);

/// Trains `options.steps` optimizer steps from global batch `batchesDone`.
bool runTraining(const TrainPlan &plan, const Artifact &compute,
                 const Artifact &apply, TrainDevice &device,
                 const amp_runtime::Tensor &data,
                 const amp_runtime::Tensor &labels, int64_t batchesDone,
                 const TrainRunOptions &options, TrainRunResult &result,
                 std::string &error);

/// The state after training, by name (for a state file).
bool readTrainedState(
    const TrainPlan &plan, TrainDevice &device,
    std::vector<std::pair<std::string, amp_runtime::Tensor>> &state,
    std::string &error);

} // namespace amp_gpu

#endif // AMP_GPU_DATAPARALLELTRAINER_H

//===- CpuRuntime.h - C ABI of the amp CPU runtime --------------*- C++ -*-===//
//
// Functions called by JIT-compiled amp programs (see
// amp-linalg-to-runtime-calls). Every memref argument arrives as an
// unranked memref: its rank and a pointer to the ranked descriptor
// {allocated, aligned, offset, sizes[rank], strides[rank]}.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_CPURUNTIME_H
#define AMP_RUNTIME_CPURUNTIME_H

#include <cstdint>

extern "C" {
/// C += A x B for rank-2 ([M,K] x [K,N]) or rank-3 (batched) operands;
/// with `transposeB`, B is given as [.., N, K].
void amp_cpu_matmul_f32(int64_t rankA, void *a, int64_t rankB, void *b,
                        int64_t rankC, void *c, int64_t transposeB);

/// Convolution of X (N, C, spatial...) with W (F, C/G, kernel...) into Y,
/// or the grouped forms X (N, G, C/G, spatial...), W (G, F/G, C/G,
/// kernel...), Y (N, G, F/G, spatial...); `spatial` (1 to 3) tells the
/// forms apart. X is zero-padded by padBegin/padEnd. `mode`: 0 accumulates
/// into Y (Y += conv), 1 writes bias + conv with B the [F] bias, 2 writes
/// conv. `relu` applies max(0, .) to the result. `constantWeights` (W is a
/// global constant) lets the runtime cache W in oneDNN's preferred layout.
void amp_cpu_conv_f32(int64_t rankX, void *x, int64_t rankW, void *w,
                      int64_t rankY, void *y, int64_t rankB, void *b,
                      int64_t stride0, int64_t stride1, int64_t stride2,
                      int64_t dilation0, int64_t dilation1, int64_t dilation2,
                      int64_t spatial, int64_t constantWeights,
                      int64_t padBegin0, int64_t padBegin1, int64_t padBegin2,
                      int64_t padEnd0, int64_t padEnd1, int64_t padEnd2,
                      int64_t mode, int64_t relu);

/// The weight gradient of that convolution: dW (F, C/G, kernel...) of X
/// (N, C, spatial...) and the output gradient dY (N, F, out spatial...), or
/// the grouped forms X (N, G, C/G, ...), dY (N, G, F/G, ...), dW (G, F/G,
/// C/G, kernel...). X is zero-padded by padBegin/padEnd. `accumulate`: 1
/// adds to dW, 0 overwrites it. oneDNN's backward-weights convolution.
void amp_cpu_conv_weight_grad_f32(
    int64_t rankX, void *x, int64_t rankDY, void *dy, int64_t rankDW,
    void *dw, int64_t stride0, int64_t stride1, int64_t stride2,
    int64_t dilation0, int64_t dilation1, int64_t dilation2, int64_t spatial,
    int64_t padBegin0, int64_t padBegin1, int64_t padBegin2, int64_t padEnd0,
    int64_t padEnd1, int64_t padEnd2, int64_t accumulate);

/// Runs `body(begin, end, context)` over [0, count) on the OpenMP thread
/// pool (the one oneDNN uses): one contiguous range per thread, or one call
/// on the calling thread when `count * workPerIteration < minWork`, when
/// only one thread is available, or inside a parallel region. Each index is
/// run exactly once, so results do not depend on the thread count as long
/// as the iterations are independent (amp-outline-parallel-loops).
void amp_cpu_parallel_for(void (*body)(int64_t, int64_t, void *),
                          void *context, int64_t count,
                          int64_t workPerIteration, int64_t minWork);
}

namespace mlir::amp {
/// Name/address pairs of the runtime functions, for a JIT symbol map.
struct RuntimeSymbol {
  const char *name;
  void *address;
};
const RuntimeSymbol *getCpuRuntimeSymbols(unsigned &count);

/// The runtime caches what it derives from constant weights (convolution
/// weights reordered into oneDNN's blocked layout) per owner: the compiled
/// function running on this thread, set by WeightCacheOwner around a call.
/// Calls without an owner do not cache. A freed program's weights may be
/// reallocated at the same address with other values, so its owner's
/// entries must be released (releaseCachedWeights) when it goes away.
class WeightCacheOwner {
public:
  explicit WeightCacheOwner(const void *owner);
  ~WeightCacheOwner();

private:
  const void *previous;
};
void releaseCachedWeights(const void *owner);

/// The first failed run-time check of a call (amp_cpu_check_failed, see
/// amp/Conversion/AmpToLinalg/RuntimeChecks.h): the check's id in the
/// module's message table, the offending value and the bound it broke.
struct RuntimeCheckFailure {
  bool failed = false;
  int64_t id = 0, value = 0, bound = 0;
};
/// Collects the failed checks of the compiled code running on this thread
/// (and of the parallel loops it starts) into `failure` while it lives.
/// Checks outside any scope are ignored.
class RuntimeCheckScope {
public:
  explicit RuntimeCheckScope(RuntimeCheckFailure *failure);
  ~RuntimeCheckScope();

private:
  RuntimeCheckFailure *previous;
};
} // namespace mlir::amp

#endif // AMP_RUNTIME_CPURUNTIME_H

//===- MemoryPlanner.h - one device arena, buffers reused by liveness -----===//
//
// Every intermediate buffer of a program gets a place in one arena. Two
// buffers may share bytes only if their lifetimes (the steps from the one
// that first writes them to the last that reads them) do not overlap. The
// planner is "greedy by size" (as TFLite's arena planner): largest buffers
// first, each into the smallest gap left between the buffers already placed
// whose lifetimes overlap its own.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_GPU_MEMORYPLANNER_H
#define AMP_GPU_MEMORYPLANNER_H

#include <cstdint>
#include <string>
#include <vector>

namespace amp_gpu {

/// A buffer's size and the first and last step (inclusive) it is live in.
struct LiveRange {
  uint64_t size = 0;
  uint32_t first = 0, last = 0;
};

struct MemoryPlan {
  std::vector<uint64_t> offsets; // aligned, one per range
  uint64_t peak = 0;             // the arena size
};

MemoryPlan planMemory(const std::vector<LiveRange> &ranges, uint64_t alignment);

/// The largest total (aligned) size of the buffers live at one step: no
/// plan can need less.
uint64_t liveSizeLowerBound(const std::vector<LiveRange> &ranges,
                            uint64_t alignment);

/// Checks alignment, the arena bound and that no two buffers live at the
/// same time share a byte; sets `error` on failure.
bool verifyMemoryPlan(const std::vector<LiveRange> &ranges,
                      const MemoryPlan &plan, uint64_t alignment,
                      std::string &error);

} // namespace amp_gpu

#endif // AMP_GPU_MEMORYPLANNER_H

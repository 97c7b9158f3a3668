//===- MemoryPlanner.cpp - greedy-by-size arena placement -----------------===//

#include "amp_gpu/MemoryPlanner.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace amp_gpu {

namespace {
uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
bool overlapInTime(const LiveRange &a, const LiveRange &b) {
  return a.first <= b.last && b.first <= a.last;
}
} // namespace

MemoryPlan planMemory(const std::vector<LiveRange> &ranges,
                      uint64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(ranges.size(), 0);
  std::vector<size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ranges[a].size != ranges[b].size)
      return ranges[a].size > ranges[b].size;
    return ranges[a].first < ranges[b].first;
  });
  std::vector<size_t> placed;
  for (size_t index : order) {
    const LiveRange &range = ranges[index];
    uint64_t size = alignUp(std::max<uint64_t>(range.size, 1), alignment);
    // The placed buffers live at the same time, by offset.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t other : placed)
      if (overlapInTime(range, ranges[other]))
        busy.push_back(
            {plan.offsets[other],
             alignUp(std::max<uint64_t>(ranges[other].size, 1), alignment)});
    std::sort(busy.begin(), busy.end());
    uint64_t best = UINT64_MAX, bestGap = UINT64_MAX, cursor = 0;
    for (const auto &[offset, length] : busy) {
      if (offset > cursor && offset - cursor >= size &&
          offset - cursor < bestGap) {
        best = cursor;
        bestGap = offset - cursor;
      }
      cursor = std::max(cursor, offset + length);
    }
    if (best == UINT64_MAX)
      best = cursor; // after the last one
    plan.offsets[index] = best;
    plan.peak = std::max(plan.peak, best + size);
    placed.push_back(index);
  }
  return plan;
}

uint64_t liveSizeLowerBound(const std::vector<LiveRange> &ranges,
                            uint64_t alignment) {
  // Sweep over the step boundaries.
  std::map<uint64_t, int64_t> delta;
  for (const LiveRange &r : ranges) {
    int64_t size =
        static_cast<int64_t>(alignUp(std::max<uint64_t>(r.size, 1), alignment));
    delta[r.first] += size;
    delta[uint64_t(r.last) + 1] -= size;
  }
  int64_t live = 0, peak = 0;
  for (const auto &[step, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

bool verifyMemoryPlan(const std::vector<LiveRange> &ranges,
                      const MemoryPlan &plan, uint64_t alignment,
                      std::string &error) {
  if (plan.offsets.size() != ranges.size()) {
    error = "one offset per buffer expected";
    return false;
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (plan.offsets[i] % alignment) {
      error = "buffer " + std::to_string(i) + " is misaligned";
      return false;
    }
    if (plan.offsets[i] + ranges[i].size > plan.peak) {
      error = "buffer " + std::to_string(i) + " runs past the arena";
      return false;
    }
    for (size_t j = 0; j < i; ++j) {
      if (!overlapInTime(ranges[i], ranges[j]) || !ranges[i].size ||
          !ranges[j].size)
        continue;
      uint64_t a = plan.offsets[i], b = plan.offsets[j];
      if (a < b + ranges[j].size && b < a + ranges[i].size) {
        error = "buffers " + std::to_string(j) + " and " + std::to_string(i) +
                " are live together and overlap";
        return false;
      }
    }
  }
  return true;
}

} // namespace amp_gpu

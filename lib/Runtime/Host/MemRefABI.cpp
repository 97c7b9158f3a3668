//===- MemRefABI.cpp - calling compiled amp programs ----------------------===//

#include "amp/Runtime/MemRefABI.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

using namespace amp_runtime;

void amp_runtime::callPacked(PackedFunction function,
                             const std::vector<Tensor> &inputs,
                             const std::vector<ResultType> &results,
                             std::vector<Tensor> &outputs) {
  // Ranked descriptors: {allocated, aligned, offset, sizes, strides}.
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<std::vector<char>> copies;
  copies.reserve(inputs.size());
  for (const Tensor &t : inputs) {
    copies.push_back(t.bytes);
    copies.back().resize(std::max<size_t>(copies.back().size(), 1));
    auto ptr = reinterpret_cast<int64_t>(copies.back().data());
    std::vector<int64_t> d = {ptr, ptr, 0};
    d.insert(d.end(), t.shape.begin(), t.shape.end());
    std::vector<int64_t> strides(t.shape.size());
    int64_t stride = 1;
    for (int64_t i = static_cast<int64_t>(t.shape.size()) - 1; i >= 0; --i) {
      strides[i] = stride;
      stride *= t.shape[i];
    }
    d.insert(d.end(), strides.begin(), strides.end());
    descriptors.push_back(std::move(d));
  }
  size_t resultWords = 0;
  for (const ResultType &result : results)
    resultWords += 3 + 2 * result.rank;
  std::vector<int64_t> resultStruct(std::max<size_t>(resultWords, 1));
  std::vector<void *> descriptorPtrs;
  for (auto &d : descriptors)
    descriptorPtrs.push_back(d.data());
  void *resultPtr = resultStruct.data();
  std::vector<void *> packed;
  if (!results.empty())
    packed.push_back(&resultPtr);
  for (void *&p : descriptorPtrs)
    packed.push_back(&p);
  function(packed.data());

  outputs.clear();
  size_t at = 0;
  std::vector<char *> allocations;
  for (const ResultType &result : results) {
    int64_t rank = result.rank;
    auto *allocated = reinterpret_cast<char *>(resultStruct[at]);
    auto *aligned = reinterpret_cast<char *>(resultStruct[at + 1]);
    int64_t offset = resultStruct[at + 2];
    Tensor t;
    t.elementType = result.elementType;
    t.shape.assign(resultStruct.begin() + at + 3,
                   resultStruct.begin() + at + 3 + rank);
    std::vector<int64_t> strides(resultStruct.begin() + at + 3 + rank,
                                 resultStruct.begin() + at + 3 + 2 * rank);
    size_t eb = getElementBytes(t.elementType);
    int64_t count = t.getNumElements();
    t.bytes.resize(count * eb);
    // Row-major results (the usual case) are one copy.
    bool rowMajor = true;
    for (int64_t d = rank - 1, expected = 1; d >= 0; --d) {
      if (t.shape[d] != 1 && strides[d] != expected)
        rowMajor = false;
      expected *= t.shape[d];
    }
    if (rowMajor && count > 0)
      std::memcpy(t.bytes.data(), aligned + offset * eb, count * eb);
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < (rowMajor ? 0 : count); ++i) {
      int64_t linear = offset;
      for (int64_t d = 0; d < rank; ++d)
        linear += index[d] * strides[d];
      std::memcpy(t.bytes.data() + i * eb, aligned + linear * eb, eb);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < t.shape[d])
          break;
        index[d] = 0;
      }
    }
    allocations.push_back(allocated);
    outputs.push_back(std::move(t));
    at += 3 + 2 * rank;
  }
  // Free each owned buffer once, after all results were copied.
  std::set<char *> freed;
  for (char *allocated : allocations) {
    if (!allocated || reinterpret_cast<uintptr_t>(allocated) == 0xdeadbeef)
      continue;
    bool isInput = std::any_of(copies.begin(), copies.end(), [&](auto &copy) {
      return copy.data() == allocated;
    });
    if (!isInput && freed.insert(allocated).second)
      std::free(allocated);
  }
}

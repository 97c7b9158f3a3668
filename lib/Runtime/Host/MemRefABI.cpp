//===- MemRefABI.cpp - calling compiled amp programs ----------------------===//

#include "amp/Runtime/MemRefABI.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

using namespace amp_runtime;

namespace {

/// Calls `function` on the buffers of `inputs`, which it may write into
/// (one-shot bufferization treats function arguments as writable), and
/// turns its results into tensors. A result that is exactly an input's
/// buffer (an update done in place) takes that buffer over without a copy;
/// other results are copied out of the program's allocations, which are
/// then freed once each.
void callOnBuffers(PackedFunction function, std::vector<Tensor> &inputs,
                   const std::vector<ResultType> &results,
                   std::vector<Tensor> &outputs) {
  // Ranked descriptors: {allocated, aligned, offset, sizes, strides}.
  std::vector<std::vector<int64_t>> descriptors;
  for (Tensor &t : inputs) {
    if (t.bytes.empty())
      t.bytes.resize(1); // a valid pointer for empty tensors
    auto ptr = reinterpret_cast<int64_t>(t.bytes.data());
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

  // The input buffers, by address; an input whose buffer a result took
  // over is marked taken (a second result on it is copied).
  std::vector<char *> inputData;
  for (Tensor &t : inputs)
    inputData.push_back(t.bytes.data());
  std::vector<bool> taken(inputs.size(), false);
  auto inputAt = [&](const char *allocated) -> int64_t {
    for (size_t i = 0; i < inputData.size(); ++i)
      if (inputData[i] == allocated)
        return static_cast<int64_t>(i);
    return -1;
  };

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
    at += 3 + 2 * rank;
    size_t eb = getElementBytes(t.elementType);
    int64_t count = t.getNumElements();
    // Row-major results (the usual case) are one block.
    bool rowMajor = true;
    for (int64_t d = rank - 1, expected = 1; d >= 0; --d) {
      if (t.shape[d] != 1 && strides[d] != expected)
        rowMajor = false;
      expected *= t.shape[d];
    }
    int64_t input = inputAt(allocated);
    if (input >= 0 && !taken[input] && rowMajor && offset == 0 &&
        aligned == allocated && count > 0 &&
        inputs[input].bytes.size() == static_cast<size_t>(count) * eb) {
      taken[input] = true;
      t.bytes = std::move(inputs[input].bytes);
      outputs.push_back(std::move(t));
      continue;
    }
    if (rowMajor) {
      const char *from = aligned + offset * eb;
      t.bytes.assign(from, from + count * eb);
    } else {
      t.bytes.resize(count * eb);
      std::vector<int64_t> index(rank, 0);
      for (int64_t i = 0; i < count; ++i) {
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
    }
    if (input < 0)
      allocations.push_back(allocated);
    outputs.push_back(std::move(t));
  }
  // Free each owned buffer once, after all results were copied.
  std::set<char *> freed;
  for (char *allocated : allocations) {
    if (!allocated || reinterpret_cast<uintptr_t>(allocated) == 0xdeadbeef)
      continue;
    if (freed.insert(allocated).second)
      std::free(allocated);
  }
}

} // namespace

void amp_runtime::callPacked(PackedFunction function,
                             const std::vector<Tensor> &inputs,
                             const std::vector<ResultType> &results,
                             std::vector<Tensor> &outputs) {
  std::vector<Tensor> copies = inputs;
  callOnBuffers(function, copies, results, outputs);
}

void amp_runtime::callPackedConsuming(PackedFunction function,
                                      std::vector<Tensor> &&inputs,
                                      const std::vector<ResultType> &results,
                                      std::vector<Tensor> &outputs) {
  std::vector<Tensor> owned = std::move(inputs);
  callOnBuffers(function, owned, results, outputs);
}

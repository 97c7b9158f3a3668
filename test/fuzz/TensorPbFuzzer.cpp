//===- TensorPbFuzzer.cpp - libFuzzer target: amp-run's .pb tensor reader -===//
//
// Any bytes: readONNXTensorBuffer fails with a message or returns a tensor
// whose byte count matches its type and shape (one byte per element for
// bool and the 4- and 2-bit integers, which ONNX packs and amp does not).
// A huge declared shape in a small input must fail (the caps of
// fuzzLimits), not allocate.
//
//===----------------------------------------------------------------------===//

#include "OnnxFuzzing.h"

#include "amp/Target/ONNX/ONNXImporter.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  amp_fuzz::FuzzContext context;
  llvm::Expected<amp::ONNXTensorData> tensor = amp::readONNXTensorBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(data), size),
      "/nonexistent-amp-fuzz/input.pb", &context.get(),
      amp_fuzz::fuzzLimits());
  if (!tensor) {
    if (llvm::toString(tensor.takeError()).empty())
      std::abort();
    return 0;
  }
  uint64_t count = 1;
  for (int64_t dim : tensor->shape)
    count *= static_cast<uint64_t>(dim);
  unsigned bits = std::max(8u, tensor->elementType.getIntOrFloatBitWidth());
  if (tensor->bytes.size() != count * (bits / 8))
    std::abort();
  return 0;
}

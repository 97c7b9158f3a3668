//===- NpyFuzzer.cpp - libFuzzer target: .npy parsing (amp-run -i) --------===//
//
// Any bytes: parseNpy fails with a message or returns a tensor whose byte
// count matches its type and shape; re-encoding it parses back to the same
// tensor. A huge declared shape in a small file must fail, not allocate.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/HostTensor.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  amp_runtime::Tensor tensor;
  std::string error;
  if (!amp_runtime::parseNpy(bytes, tensor, error)) {
    if (error.empty())
      std::abort();
    return 0;
  }
  size_t expected = amp_runtime::getElementBytes(tensor.elementType) *
                    static_cast<size_t>(tensor.getNumElements());
  if (tensor.bytes.size() != expected)
    std::abort();
  if (tensor.elementType == amp_runtime::ElementType::BF16)
    return 0; // written as float32 (exactly), read back as f32
  amp_runtime::Tensor again;
  if (!amp_runtime::parseNpy(amp_runtime::encodeNpy(tensor), again, error) ||
      again.shape != tensor.shape || again.bytes != tensor.bytes ||
      again.elementType != tensor.elementType)
    std::abort();
  return 0;
}

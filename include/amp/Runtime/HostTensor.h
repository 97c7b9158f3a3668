//===- HostTensor.h - tensors in host memory and .npy files -----*- C++ -*-===//
//
// A tensor in host memory (element type, shape, raw bytes in C order) and
// the .npy format. Part of amp's runtime layer: plain C++, no MLIR or LLVM,
// so that every runtime (the CPU JIT driver, the CUDA runtime, the Python
// package) shares one definition.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_HOSTTENSOR_H
#define AMP_RUNTIME_HOSTTENSOR_H

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace amp_runtime {

/// Element types of amp programs (signedness kept; Bool is one byte).
enum class ElementType : uint8_t {
  F64,
  F32,
  F16,
  BF16,
  Bool,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64
};

size_t getElementBytes(ElementType type);
bool isUnsignedType(ElementType type);
/// The name MLIR prints for the type (f32, bf16, i1, ui8, ...).
const char *getElementTypeName(ElementType type);

/// "[2, 3, ?]" (negative sizes print as ?).
std::string formatShape(const std::vector<int64_t> &shape);

struct Tensor {
  ElementType elementType = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<char> bytes;

  int64_t getNumElements() const {
    // A zero dimension first: [huge, huge, 0] holds nothing (and the
    // product of the others must not overflow).
    for (int64_t d : shape)
      if (d == 0)
        return 0;
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  /// Element `i` as a double (exact for every type but 64-bit integers
  /// beyond 2^53).
  double getAsDouble(int64_t i) const;
};

/// Reads a .npy file (C order, little-endian; bool, int, uint and float
/// arrays). On failure returns false and sets `error` ("'<path>': why").
/// Parses the contents of a .npy file (errors without a file name).
bool parseNpy(const std::string &data, Tensor &tensor, std::string &error);
/// The contents of a .npy file holding `tensor` (bf16 as float32).
std::string encodeNpy(const Tensor &tensor);
/// Writes `contents` to `path` through a temporary file and a rename, so a
/// failed write leaves no partial file.
bool writeFileAtomically(const std::string &path, const std::string &contents,
                         std::string &error);
bool readNpy(const std::string &path, Tensor &tensor, std::string &error);

/// Writes a .npy file (bf16 as float32, exactly). The file appears only
/// complete: it is written under a temporary name and renamed.
bool writeNpy(const std::string &path, const Tensor &tensor,
              std::string &error);

/// A tensor of seeded random values: floats uniform in [-1, 1) (rounded to
/// nearest even for fp16/bf16), integers in [0, 10), bools 0 or 1.
Tensor makeRandomTensor(ElementType type, const std::vector<int64_t> &shape,
                        std::mt19937_64 &rng);

/// A copy of an f32 tensor in `type` (F16 or BF16, round to nearest even).
Tensor convertF32Tensor(const Tensor &tensor, ElementType type);

} // namespace amp_runtime

#endif // AMP_RUNTIME_HOSTTENSOR_H

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

#include "amp/Runtime/FloatConversion.h"

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace amp_runtime {

/// Element types of amp programs (signedness kept; Bool is one byte). The
/// 8-bit floats and the 4- and 2-bit integers are storage types (see
/// Float8Kind); the narrow integers take one byte per element in memory,
/// with only their low bits significant (ONNX files pack them).
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
  U64,
  F8E4M3FN,
  F8E4M3FNUZ,
  F8E5M2,
  F8E5M2FNUZ,
  I4,
  U4,
  I2,
  U2
};

size_t getElementBytes(ElementType type);
bool isUnsignedType(ElementType type);
/// The 8-bit float kind of `type`, or false.
bool getFloat8Kind(ElementType type, Float8Kind &kind);
/// Bits of a 4- or 2-bit integer type (0 for the others).
unsigned getNarrowIntegerBits(ElementType type);
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
/// arrays; 8-bit floats travel as float32 and 4- and 2-bit integers as
/// int8/uint8, as bf16 does). On failure returns false and sets `error`
/// ("'<path>': why"). Parses the contents of a .npy file (errors without a file
/// name).
bool parseNpy(const std::string &data, Tensor &tensor, std::string &error);
/// The contents of a .npy file holding `tensor` (in its carrier type).
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

/// The type values of `type` are exchanged as with numpy, which lacks it:
/// f32 for bf16 and the 8-bit floats, i8/ui8 for the 4- and 2-bit integers;
/// `type` itself for the others.
ElementType getCarrierType(ElementType type);
/// `tensor` in its carrier type (exact).
Tensor toCarrierType(const Tensor &tensor);

/// A copy of `tensor` in the storage type `type`: an 8-bit float from f32
/// (round to nearest even, saturating), a 4- or 2-bit integer from int8 or
/// uint8 (values out of its range are an error, in `error`).
bool convertToStorageType(const Tensor &tensor, ElementType type,
                          Tensor &converted, std::string &error);

/// A copy of an f32 tensor in `type` (F16 or BF16, round to nearest even).
Tensor convertF32Tensor(const Tensor &tensor, ElementType type);

} // namespace amp_runtime

#endif // AMP_RUNTIME_HOSTTENSOR_H

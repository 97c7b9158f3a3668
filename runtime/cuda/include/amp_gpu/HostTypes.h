//===- HostTypes.h - artifact dtypes as amp's host tensor types -*- C++ -*-===//
//
// For the runtime's drivers and the CPU emulation, which read and write
// amp_runtime::Tensor (.npy, .npz): the header-only part of the runtime that
// uses amp's host tensors (linked by the user: lib/Runtime/Host).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_GPU_HOSTTYPES_H
#define AMP_GPU_HOSTTYPES_H

#include "amp/Runtime/HostTensor.h"
#include "amp_gpu/Artifact.h"

namespace amp_gpu {

/// The host tensor type of an artifact's dtype.
inline bool toElementType(DType type, amp_runtime::ElementType &out) {
  using amp_runtime::ElementType;
  switch (type) {
  case DType::F32:
    out = ElementType::F32;
    return true;
  case DType::F16:
    out = ElementType::F16;
    return true;
  case DType::BF16:
    out = ElementType::BF16;
    return true;
  case DType::F64:
    out = ElementType::F64;
    return true;
  case DType::I64:
    out = ElementType::I64;
    return true;
  case DType::I32:
    out = ElementType::I32;
    return true;
  case DType::I16:
    out = ElementType::I16;
    return true;
  case DType::I8:
    out = ElementType::I8;
    return true;
  case DType::U64:
    out = ElementType::U64;
    return true;
  case DType::U32:
    out = ElementType::U32;
    return true;
  case DType::U16:
    out = ElementType::U16;
    return true;
  case DType::U8:
    out = ElementType::U8;
    return true;
  case DType::Bool:
    out = ElementType::Bool;
    return true;
  }
  return false;
}

} // namespace amp_gpu

#endif // AMP_GPU_HOSTTYPES_H

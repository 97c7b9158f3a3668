//===- ExternalData.h - safe reading of ONNX external tensor data -*- C++ -*-===//
//
// ONNX tensors may keep their bytes in a file next to the model. The
// location is untrusted input: it must stay inside the model's folder (no
// absolute paths, no `..`, no symlinks, no multiply hard-linked files), only
// the keys location/offset/length/checksum are accepted, and offset + length
// are checked against the file with overflow-safe arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_ONNX_EXTERNALDATA_H
#define AMP_TARGET_ONNX_EXTERNALDATA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace mlir::amp {

/// Where a tensor's bytes live.
struct ExternalDataRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  /// Lower-case hex SHA-1 of the bytes, when the model gives one.
  std::optional<std::string> checksum;
};

/// Validates the key/value entries of a TensorProto's `external_data`.
llvm::Expected<ExternalDataRef> parseExternalDataEntries(
    llvm::ArrayRef<std::pair<std::string, std::string>> entries);

/// Reads exactly `size` bytes described by `ref` into `out`, confining the
/// file to `modelDir` (which must be non-empty).
llvm::Error readExternalData(llvm::StringRef modelDir,
                             const ExternalDataRef &ref, uint64_t size,
                             char *out);

/// Parses a non-negative decimal integer without overflow; digits only.
std::optional<uint64_t> parseDecimalU64(llvm::StringRef text);

} // namespace mlir::amp

#endif // AMP_TARGET_ONNX_EXTERNALDATA_H

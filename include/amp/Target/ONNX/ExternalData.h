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

/// An external data range that has been checked against its file: the
/// location stays inside the model folder, the file is a regular, singly
/// linked file, and [offset, offset + size) lies inside it. Opening checks
/// everything that can be checked without the bytes, so a caller allocates
/// `size` bytes only after the file has shown that it holds them.
class OpenedExternalData {
public:
  /// Opens the file `ref` names, confined to `modelDir` (which must be
  /// non-empty), and checks that it holds exactly `size` bytes at the
  /// reference's offset (its length, when given, must be `size`).
  static llvm::Expected<OpenedExternalData>
  open(llvm::StringRef modelDir, const ExternalDataRef &ref, uint64_t size);

  OpenedExternalData(OpenedExternalData &&other) noexcept;
  OpenedExternalData &operator=(OpenedExternalData &&) = delete;
  OpenedExternalData(const OpenedExternalData &) = delete;
  ~OpenedExternalData();

  /// The number of bytes readInto writes.
  uint64_t size() const { return size_; }

  /// Reads the range into `out` (size() bytes) and checks the checksum the
  /// reference gives, if any.
  llvm::Error readInto(char *out);

private:
  OpenedExternalData(int fd, const ExternalDataRef &ref, uint64_t size)
      : fd_(fd), ref_(ref), size_(size) {}

  int fd_;
  ExternalDataRef ref_;
  uint64_t size_;
};

/// Reads exactly `size` bytes described by `ref` into `out`, confining the
/// file to `modelDir` (which must be non-empty): OpenedExternalData::open,
/// then readInto.
llvm::Error readExternalData(llvm::StringRef modelDir,
                             const ExternalDataRef &ref, uint64_t size,
                             char *out);

/// Parses a non-negative decimal integer without overflow; digits only.
std::optional<uint64_t> parseDecimalU64(llvm::StringRef text);

} // namespace mlir::amp

#endif // AMP_TARGET_ONNX_EXTERNALDATA_H

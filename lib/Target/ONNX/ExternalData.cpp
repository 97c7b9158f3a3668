//===- ExternalData.cpp - safe reading of ONNX external tensor data -------===//

#include "amp/Target/ONNX/ExternalData.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA1.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace mlir::amp;
using llvm::createStringError;
using llvm::StringRef;

static llvm::Error error(const llvm::Twine &message) {
  return createStringError(llvm::inconvertibleErrorCode(), message);
}

std::optional<uint64_t> mlir::amp::parseDecimalU64(StringRef text) {
  if (text.empty() || text.size() > 20)
    return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    uint64_t digit = c - '0';
    if (value > (UINT64_MAX - digit) / 10)
      return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

llvm::Expected<ExternalDataRef> mlir::amp::parseExternalDataEntries(
    llvm::ArrayRef<std::pair<std::string, std::string>> entries) {
  ExternalDataRef ref;
  llvm::StringSet<> seen;
  for (const auto &[key, value] : entries) {
    if (!seen.insert(key).second)
      return error("external_data key '" + key + "' appears twice");
    if (key == "location") {
      ref.location = value;
    } else if (key == "offset" || key == "length") {
      std::optional<uint64_t> number = parseDecimalU64(value);
      if (!number)
        return error("external_data '" + key + "' is not a non-negative "
                     "64-bit decimal integer: '" + value + "'");
      (key == "offset" ? ref.offset : ref.length.emplace()) = *number;
    } else if (key == "checksum") {
      std::string lower = StringRef(value).lower();
      if (lower.size() != 40 || !llvm::all_of(lower, llvm::isHexDigit))
        return error("external_data checksum must be a 40-digit SHA-1 hex "
                     "digest");
      ref.checksum = lower;
    } else {
      return error("unknown external_data key '" + key +
                   "' (allowed: location, offset, length, checksum)");
    }
  }
  if (ref.location.empty())
    return error("external_data has no 'location'");
  return ref;
}

/// Rejects locations that could name anything outside the model folder
/// before touching the file system.
static llvm::Error checkLocationSyntax(StringRef location) {
  if (location.contains('\0'))
    return error("external data location contains a NUL character");
  if (location.contains('\\'))
    return error("external data location '" + location +
                 "' contains a backslash");
  if (llvm::sys::path::is_absolute(location) || location.starts_with("/") ||
      (location.size() >= 2 && location[1] == ':'))
    return error("external data location '" + location +
                 "' is absolute; it must be relative to the model's folder");
  for (auto it = llvm::sys::path::begin(location),
            end = llvm::sys::path::end(location);
       it != end; ++it)
    if (*it == "..")
      return error("external data location '" + location +
                   "' contains '..'; it must stay inside the model's folder");
  return llvm::Error::success();
}

namespace {
/// Closes a file descriptor on scope exit unless released.
struct FileDescriptor {
  int fd;
  int release() { return std::exchange(fd, -1); }
  ~FileDescriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};
} // namespace

OpenedExternalData::OpenedExternalData(OpenedExternalData &&other) noexcept
    : fd_(std::exchange(other.fd_, -1)), ref_(std::move(other.ref_)),
      size_(other.size_) {}

OpenedExternalData::~OpenedExternalData() {
  if (fd_ >= 0)
    ::close(fd_);
}

llvm::Expected<OpenedExternalData>
OpenedExternalData::open(StringRef modelDir, const ExternalDataRef &ref,
                         uint64_t size) {
  if (modelDir.empty())
    return error("external data needs the model's folder, but the model was "
                 "not loaded from a file");
  if (llvm::Error err = checkLocationSyntax(ref.location))
    return err;

  llvm::SmallString<256> realDir;
  if (std::error_code ec = llvm::sys::fs::real_path(modelDir, realDir))
    return error("cannot resolve the model folder '" + modelDir +
                 "': " + ec.message());
  llvm::SmallString<256> joined(realDir);
  llvm::sys::path::append(joined, ref.location);

  // The final component must not be a symlink (checked again by O_NOFOLLOW).
  struct stat linkStat;
  if (::lstat(joined.c_str(), &linkStat) != 0)
    return error("cannot open external data file '" + ref.location +
                 "': " + std::strerror(errno));
  if (S_ISLNK(linkStat.st_mode))
    return error("external data file '" + ref.location +
                 "' is a symbolic link; links are not followed");

  // Intermediate folders may be symlinks pointing elsewhere: the resolved
  // path must still lie inside the model folder.
  llvm::SmallString<256> realFile;
  if (std::error_code ec = llvm::sys::fs::real_path(joined, realFile))
    return error("cannot resolve external data file '" + ref.location +
                 "': " + ec.message());
  llvm::SmallString<256> prefix(realDir);
  if (!prefix.ends_with("/"))
    prefix.push_back('/');
  if (!StringRef(realFile).starts_with(prefix))
    return error("external data file '" + ref.location +
                 "' resolves outside the model's folder");

  FileDescriptor file{::open(realFile.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
  if (file.fd < 0)
    return error("cannot open external data file '" + ref.location +
                 "': " + std::strerror(errno));
  struct stat fileStat;
  if (::fstat(file.fd, &fileStat) != 0)
    return error("cannot stat external data file '" + ref.location + "'");
  if (!S_ISREG(fileStat.st_mode))
    return error("external data file '" + ref.location +
                 "' is not a regular file");
  if (fileStat.st_nlink != 1)
    return error("external data file '" + ref.location + "' has " +
                 llvm::Twine(static_cast<uint64_t>(fileStat.st_nlink)) +
                 " hard links; only singly linked files are read");

  uint64_t fileSize = static_cast<uint64_t>(fileStat.st_size);
  if (ref.offset > fileSize)
    return error("external data offset " + llvm::Twine(ref.offset) +
                 " is past the end of '" + ref.location + "' (" +
                 llvm::Twine(fileSize) + " bytes)");
  uint64_t available = fileSize - ref.offset;
  uint64_t length = ref.length.value_or(available);
  if (length > available)
    return error("external data range [" + llvm::Twine(ref.offset) + ", +" +
                 llvm::Twine(length) + ") exceeds '" + ref.location + "' (" +
                 llvm::Twine(fileSize) + " bytes)");
  if (length != size)
    return error("external data for the tensor is " + llvm::Twine(length) +
                 " bytes but its shape and type need " + llvm::Twine(size));

  return OpenedExternalData(file.release(), ref, size);
}

llvm::Error OpenedExternalData::readInto(char *out) {
  const ExternalDataRef &ref = ref_;
  uint64_t size = size_;
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_, out + done, size - done,
                        static_cast<off_t>(ref.offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return error("failed to read external data file '" + ref.location +
                   "'");
    done += static_cast<uint64_t>(n);
  }

  if (ref.checksum) {
    llvm::SHA1 sha;
    sha.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<uint8_t *>(out), size));
    std::array<uint8_t, 20> digest = sha.final();
    if (llvm::toHex(digest, /*LowerCase=*/true) != *ref.checksum)
      return error("external data checksum mismatch for '" + ref.location +
                   "'");
  }
  return llvm::Error::success();
}

llvm::Error mlir::amp::readExternalData(StringRef modelDir,
                                        const ExternalDataRef &ref,
                                        uint64_t size, char *out) {
  llvm::Expected<OpenedExternalData> opened =
      OpenedExternalData::open(modelDir, ref, size);
  if (!opened)
    return opened.takeError();
  return opened->readInto(out);
}

//===- Npz.cpp - numpy .npz archives of named tensors ---------------------===//

#include "amp/Runtime/Npz.h"

#include <zip.h>

#include <cstdio>
#include <filesystem>
#include <memory>

using namespace amp_runtime;

namespace {
struct ArchiveCloser {
  void operator()(zip_t *archive) const { zip_discard(archive); }
};
using Archive = std::unique_ptr<zip_t, ArchiveCloser>;

std::string zipError(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}
} // namespace

bool amp_runtime::readNpz(const std::string &path, NamedTensors &arrays,
                          std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "'" + path + "': " + why;
    return false;
  };
  int code = 0;
  Archive archive(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!archive)
    return fail("cannot read as .npz: " + zipError(code));
  std::error_code sizeError;
  zip_uint64_t fileSize = std::filesystem::file_size(path, sizeError);
  if (sizeError)
    return fail("cannot read its size");
  zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  arrays.clear();
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t stat;
    if (zip_stat_index(archive.get(), i, 0, &stat) != 0 ||
        !(stat.valid & ZIP_STAT_SIZE) || !(stat.valid & ZIP_STAT_NAME))
      return fail("unreadable entry " + std::to_string(i));
    std::string name = stat.name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
      return fail("entry '" + name + "' is not a .npy array");
    // Refuse sizes no state file has before allocating (zip bombs), and
    // sizes the entry cannot hold: deflate expands at most ~1032:1, a
    // stored entry not at all.
    if (stat.size > (zip_uint64_t(1) << 36))
      return fail("entry '" + name + "' is larger than 64 GiB");
    if (!(stat.valid & ZIP_STAT_COMP_SIZE) || stat.comp_size > fileSize)
      return fail("entry '" + name + "' declares more compressed bytes "
                  "than the file has");
    if (stat.size > stat.comp_size * zip_uint64_t(1032) + 1024)
      return fail("entry '" + name + "' declares " +
                  std::to_string(stat.size) + " bytes but holds " +
                  std::to_string(stat.comp_size) + " compressed");
    std::unique_ptr<zip_file_t, int (*)(zip_file_t *)> file(
        zip_fopen_index(archive.get(), i, 0), zip_fclose);
    if (!file)
      return fail("cannot open entry '" + name + "'");
    std::string data(stat.size, '\0');
    zip_int64_t got = zip_fread(file.get(), data.data(), stat.size);
    if (got < 0 || static_cast<zip_uint64_t>(got) != stat.size)
      return fail("entry '" + name + "' is truncated");
    Tensor tensor;
    std::string why;
    if (!parseNpy(data, tensor, why))
      return fail("entry '" + name + "': " + why);
    arrays.emplace_back(name.substr(0, name.size() - 4), std::move(tensor));
  }
  return true;
}

bool amp_runtime::writeNpz(const std::string &path, const NamedTensors &arrays,
                           std::string &error) {
  std::string partial = path + ".partial";
  std::remove(partial.c_str());
  int code = 0;
  zip_t *archive = zip_open(partial.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (!archive) {
    error = "cannot write '" + path + "': " + zipError(code);
    return false;
  }
  // libzip reads the buffers when the archive is closed: keep them alive.
  std::vector<std::string> buffers;
  buffers.reserve(arrays.size());
  auto fail = [&](const std::string &why) {
    error = "cannot write '" + path + "': " + why;
    zip_discard(archive);
    std::remove(partial.c_str());
    return false;
  };
  for (const auto &[name, tensor] : arrays) {
    buffers.push_back(encodeNpy(tensor));
    const std::string &data = buffers.back();
    zip_source_t *source =
        zip_source_buffer(archive, data.data(), data.size(), 0);
    if (!source)
      return fail(zip_strerror(archive));
    zip_int64_t index = zip_file_add(archive, (name + ".npy").c_str(), source,
                                     ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE);
    if (index < 0) {
      zip_source_free(source);
      return fail(zip_strerror(archive));
    }
    zip_set_file_compression(archive, index, ZIP_CM_STORE, 0);
    // A fixed time stamp: the same state gives the same bytes.
    zip_file_set_dostime(archive, index, 0, 0x21, 0);
  }
  if (zip_close(archive) != 0)
    return fail(zip_strerror(archive));
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    error = "cannot write '" + path + "'";
    std::remove(partial.c_str());
    return false;
  }
  return true;
}

//===- NpzTest.cpp - training state files (.npz) --------------------------===//

#include "amp/Runtime/Npz.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace amp_runtime;

namespace {

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("amp-npz-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

Tensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t;
  t.elementType = ElementType::F32;
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * 4);
  // memcpy from an empty vector's null data() is undefined (UBSan).
  if (!values.empty())
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

TEST(NpzTest, RoundTripKeepsNamesOrderTypesAndBytes) {
  Tensor step;
  step.elementType = ElementType::I64;
  step.bytes.resize(8);
  int64_t seven = 7;
  std::memcpy(step.bytes.data(), &seven, 8);
  NamedTensors arrays{{"fc.weight", f32({2, 2}, {1, -2, 3.5f, 0})},
                      {"fc.weight.exp_avg", f32({2, 2}, {0, 0, 0, 1e-30f})},
                      {"step", step},
                      {"empty", f32({0, 3}, {})}};
  std::string path = tempPath("roundtrip.npz"), error;
  ASSERT_TRUE(writeNpz(path, arrays, error)) << error;
  NamedTensors read;
  ASSERT_TRUE(readNpz(path, read, error)) << error;
  ASSERT_EQ(read.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(read[i].first, arrays[i].first);
    EXPECT_EQ(read[i].second.elementType, arrays[i].second.elementType);
    EXPECT_EQ(read[i].second.shape, arrays[i].second.shape);
    EXPECT_EQ(read[i].second.bytes, arrays[i].second.bytes);
  }
  // The same arrays give the same bytes (fixed time stamps).
  std::string again = tempPath("again.npz");
  ASSERT_TRUE(writeNpz(again, arrays, error)) << error;
  std::ifstream a(path, std::ios::binary), b(again, std::ios::binary);
  std::string bytesA((std::istreambuf_iterator<char>(a)), {}),
      bytesB((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(bytesA, bytesB);
  std::filesystem::remove(path);
  std::filesystem::remove(again);
}

TEST(NpzTest, BadFilesAreClearErrors) {
  std::string error;
  NamedTensors read;
  EXPECT_FALSE(readNpz(tempPath("missing.npz"), read, error));
  EXPECT_NE(error.find("cannot read as .npz"), std::string::npos) << error;

  std::string garbage = tempPath("garbage.npz");
  std::ofstream(garbage) << "not a zip archive at all";
  EXPECT_FALSE(readNpz(garbage, read, error));
  EXPECT_NE(error.find("garbage.npz"), std::string::npos) << error;
  std::filesystem::remove(garbage);

  // A valid archive whose entry is not an .npy array.
  std::string path = tempPath("bad-entry.npz");
  NamedTensors arrays{{"x", f32({1}, {1})}};
  ASSERT_TRUE(writeNpz(path, arrays, error)) << error;
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), {});
  size_t magic = bytes.find("\x93NUMPY");
  ASSERT_NE(magic, std::string::npos);
  file.seekp(magic);
  file.write("XXXXXX", 6);
  file.close();
  EXPECT_FALSE(readNpz(path, read, error));
  EXPECT_NE(error.find("entry 'x.npy'"), std::string::npos) << error;
  std::filesystem::remove(path);
}

TEST(NpzTest, FailedWriteLeavesNoFile) {
  std::string error;
  std::string path = "/nonexistent-dir/state.npz";
  EXPECT_FALSE(writeNpz(path, {{"x", f32({1}, {1})}}, error));
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(NpzTest, LyingEntrySizesAreErrorsNotAllocations) {
  // A compressed entry of 71 bytes that declares 4 GB (found by
  // scripts/fuzz.sh; also in test/fuzz/corpus/npz): refused before any
  // allocation, because deflate expands at most ~1032:1.
  static const unsigned char bytes[] = {
    0x50, 0x4b, 0x03, 0x04, 0x2d, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
    0x21, 0x00, 0x89, 0xdd, 0x20, 0x1a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0x05, 0x00, 0x14, 0x00, 0x62, 0x2e, 0x6e, 0x70, 0x79, 0x01,
    0x00, 0x10, 0x00, 0x86, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x47,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x9b, 0xec, 0x17, 0xea, 0x1b,
    0x10, 0xc9, 0xc0, 0x50, 0xc6, 0x50, 0xad, 0x9e, 0x92, 0x5a, 0x9c, 0x5c,
    0xa4, 0x6e, 0xa5, 0xa4, 0x93, 0x66, 0xae, 0xa0, 0x6e, 0xa3, 0xa0, 0x9e,
    0x96, 0x5f, 0x54, 0x52, 0x94, 0x98, 0x17, 0x9f, 0x5f, 0x94, 0x92, 0x0a,
    0x12, 0x77, 0x4b, 0xcc, 0x29, 0x4e, 0x05, 0x8a, 0x17, 0x67, 0x24, 0x16,
    0xa4, 0x02, 0xf9, 0x1a, 0xc6, 0x3a, 0x9a, 0x3a, 0x0a, 0xb5, 0x0a, 0x14,
    0x00, 0x2e, 0x06, 0x30, 0x00, 0x00, 0x50, 0x4b, 0x01, 0x02, 0x2d, 0x03,
    0x2d, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21, 0x00, 0x89, 0xdd,
    0x20, 0x1a, 0x47, 0x00, 0x00, 0x00, 0x85, 0xff, 0xff, 0xfc, 0x05, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01,
    0x00, 0x00, 0x00, 0x00, 0x62, 0x2e, 0x6e, 0x70, 0x79, 0x50, 0x4b, 0x05,
    0x06, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x33, 0x00, 0x00,
    0x00, 0x7e, 0x00, 0x00, 0x00, 0x00, 0x00};
  std::string path = tempPath("lying.npz");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes), sizeof(bytes));
  }
  NamedTensors arrays;
  std::string error;
  EXPECT_FALSE(readNpz(path, arrays, error));
  EXPECT_NE(error.find("declares 4244635525 bytes but holds 71 compressed"),
            std::string::npos)
      << error;
  std::remove(path.c_str());
}

} // namespace

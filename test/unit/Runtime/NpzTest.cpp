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

} // namespace

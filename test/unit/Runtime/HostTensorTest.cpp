//===- HostTensorTest.cpp - host tensors, .npy files, calling convention --===//

#include "amp/Runtime/HostTensor.h"
#include "amp/Runtime/MemRefABI.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace amp_runtime;

namespace {

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("amp-host-tensor-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

Tensor makeTensor(ElementType type, std::vector<int64_t> shape,
                  std::vector<char> bytes) {
  Tensor t;
  t.elementType = type;
  t.shape = std::move(shape);
  t.bytes = std::move(bytes);
  return t;
}

TEST(HostTensor, NpyRoundTripKeepsTypeShapeAndBytes) {
  std::mt19937_64 rng(7);
  for (ElementType type :
       {ElementType::F64, ElementType::F32, ElementType::F16, ElementType::Bool,
        ElementType::I8, ElementType::I32, ElementType::I64, ElementType::U8,
        ElementType::U16}) {
    Tensor t = makeRandomTensor(type, {2, 3, 5}, rng);
    std::string path = tempPath("roundtrip.npy");
    std::string error;
    ASSERT_TRUE(writeNpy(path, t, error)) << error;
    Tensor back;
    ASSERT_TRUE(readNpy(path, back, error)) << error;
    EXPECT_EQ(back.elementType, type) << getElementTypeName(type);
    EXPECT_EQ(back.shape, t.shape);
    EXPECT_EQ(back.bytes, t.bytes) << getElementTypeName(type);
    std::remove(path.c_str());
  }
}

TEST(HostTensor, Bf16IsWrittenAsExactFloat32) {
  // bf16 1.5 and -2.0, written as float32.
  Tensor t = makeTensor(ElementType::BF16, {2}, {});
  uint16_t bits[] = {0x3fc0, 0xc000};
  t.bytes.assign(reinterpret_cast<char *>(bits),
                 reinterpret_cast<char *>(bits) + 4);
  std::string path = tempPath("bf16.npy"), error;
  ASSERT_TRUE(writeNpy(path, t, error)) << error;
  Tensor back;
  ASSERT_TRUE(readNpy(path, back, error)) << error;
  EXPECT_EQ(back.elementType, ElementType::F32);
  EXPECT_EQ(back.getAsDouble(0), 1.5);
  EXPECT_EQ(back.getAsDouble(1), -2.0);
  // And converted back to bf16 exactly.
  Tensor again = convertF32Tensor(back, ElementType::BF16);
  EXPECT_EQ(again.bytes, t.bytes);
  std::remove(path.c_str());
}

TEST(HostTensor, BadFilesAreErrorsThatNameTheFile) {
  std::string path = tempPath("bad.npy"), error;
  Tensor t;
  {
    std::ofstream os(path, std::ios::binary);
    os << "not numpy at all";
  }
  EXPECT_FALSE(readNpy(path, t, error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("not a .npy file"), std::string::npos) << error;
  {
    std::ofstream os(path, std::ios::binary);
    std::string header = "{'descr': '<f4', 'fortran_order': True, "
                         "'shape': (2,), }";
    os << "\x93NUMPY" << char(1) << char(0) << char(header.size()) << char(0)
       << header << std::string(8, '\0');
  }
  EXPECT_FALSE(readNpy(path, t, error));
  EXPECT_NE(error.find("Fortran"), std::string::npos) << error;
  {
    std::ofstream os(path, std::ios::binary);
    std::string header = "{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (3,), }";
    os << "\x93NUMPY" << char(1) << char(0) << char(header.size()) << char(0)
       << header << std::string(8, '\0');
  }
  EXPECT_FALSE(readNpy(path, t, error));
  EXPECT_NE(error.find("needs 12"), std::string::npos) << error;
  std::remove(path.c_str());
  EXPECT_FALSE(readNpy(tempPath("missing.npy"), t, error));
  EXPECT_NE(error.find("cannot read"), std::string::npos) << error;
  // A failed write leaves no file behind.
  EXPECT_FALSE(writeNpy("/nonexistent-dir/x.npy", t, error));
}

// A "compiled program" with the packed C-interface calling convention:
// result = input * 2 (f32, rank 2), in a buffer it allocates.
void doubleIt(void **args) {
  auto *result = *static_cast<int64_t **>(args[0]);
  auto *input = *static_cast<int64_t **>(args[1]);
  int64_t rows = input[3], cols = input[4];
  const float *in = reinterpret_cast<const float *>(input[1]) + input[2];
  auto *out = static_cast<float *>(std::malloc(rows * cols * sizeof(float)));
  for (int64_t i = 0; i < rows * cols; ++i)
    out[i] = 2 * in[i];
  int64_t descriptor[] = {reinterpret_cast<int64_t>(out),
                          reinterpret_cast<int64_t>(out),
                          0,
                          rows,
                          cols,
                          cols,
                          1};
  std::memcpy(result, descriptor, sizeof(descriptor));
}

TEST(HostTensor, HugeShapesAreErrorsNotOverflows) {
  // Found by scripts/fuzz.sh (test/fuzz/corpus/npy/regression-*): shapes
  // whose element count overflows int64 in a small file.
  auto npy = [](const std::string &shape, size_t payload) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (" + shape + "), }";
    header.append(63 - (10 + header.size()) % 64, ' ');
    header += '\n';
    std::string data("\x93NUMPY\x01\x00", 8);
    data += static_cast<char>(header.size() & 0xff);
    data += static_cast<char>(header.size() >> 8);
    return data + header + std::string(payload, '\0');
  };
  Tensor tensor;
  std::string error;
  EXPECT_FALSE(parseNpy(npy("4611686018427387904, 4", 16), tensor, error));
  EXPECT_NE(error.find("needs more than 2^64"), std::string::npos) << error;
  // A zero dimension holds nothing, whatever the others are.
  ASSERT_TRUE(parseNpy(npy("9223372036854775807, 2722222222222222, 0", 0),
                       tensor, error))
      << error;
  EXPECT_EQ(tensor.getNumElements(), 0);
}

TEST(MemRefABI, CallsPackedFunctionsAndCopiesResults) {
  Tensor x = makeTensor(ElementType::F32, {2, 3}, {});
  float values[] = {1, 2, 3, 4, 5, 6};
  x.bytes.assign(reinterpret_cast<char *>(values),
                 reinterpret_cast<char *>(values) + sizeof(values));
  std::vector<Tensor> outputs;
  callPacked(doubleIt, {x}, {{ElementType::F32, 2}}, outputs);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].shape, (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(outputs[0].getAsDouble(i), 2 * values[i]);
}

Tensor floatTensor(std::vector<float> values) {
  const char *bytes = reinterpret_cast<const char *>(values.data());
  return makeTensor(ElementType::F32, {static_cast<int64_t>(values.size())},
                    std::vector<char>(bytes, bytes + values.size() * 4));
}

/// (x: memref<?xf32>) -> (x updated in place (x += 1), the same buffer
/// again, a fresh copy of it): the shapes of an optimizer update.
void incrementInPlace(void **args) {
  auto *result = *static_cast<int64_t **>(args[0]);
  auto *input = *static_cast<int64_t **>(args[1]);
  int64_t n = input[3];
  float *data = reinterpret_cast<float *>(input[1]) + input[2];
  for (int64_t i = 0; i < n; ++i)
    data[i] += 1;
  auto *fresh = static_cast<float *>(std::malloc(n * sizeof(float)));
  std::memcpy(fresh, data, n * sizeof(float));
  int64_t descriptors[] = {input[0], input[1], input[2], n, 1,
                           input[0], input[1], input[2], n, 1,
                           reinterpret_cast<int64_t>(fresh),
                           reinterpret_cast<int64_t>(fresh), 0, n, 1};
  std::memcpy(result, descriptors, sizeof(descriptors));
}

TEST(MemRefABI, CopyingCallsLeaveTheCallersTensorsAlone) {
  Tensor x = floatTensor({1, 2, 3});
  std::vector<Tensor> inputs = {x}, outputs;
  std::vector<ResultType> types(3, {ElementType::F32, 1});
  callPacked(incrementInPlace, inputs, types, outputs);
  ASSERT_EQ(outputs.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(inputs[0].getAsDouble(i), i + 1);
    for (const Tensor &out : outputs)
      EXPECT_EQ(out.getAsDouble(i), i + 2);
  }
}

TEST(MemRefABI, ConsumingCallsMoveBuffersUpdatedInPlace) {
  Tensor x = floatTensor({1, 2, 3});
  std::vector<Tensor> inputs, outputs;
  inputs.push_back(std::move(x));
  const char *buffer = inputs[0].bytes.data();
  std::vector<ResultType> types(3, {ElementType::F32, 1});
  callPackedConsuming(incrementInPlace, std::move(inputs), types, outputs);
  ASSERT_EQ(outputs.size(), 3u);
  // The first result takes the input's buffer over; the second names the
  // same buffer and is copied; the third is the program's own allocation,
  // copied and freed.
  EXPECT_EQ(outputs[0].bytes.data(), buffer);
  EXPECT_NE(outputs[1].bytes.data(), buffer);
  for (const Tensor &out : outputs) {
    ASSERT_EQ(out.shape, (std::vector<int64_t>{3}));
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(out.getAsDouble(i), i + 2);
  }
}

} // namespace

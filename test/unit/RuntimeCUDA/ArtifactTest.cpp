//===- ArtifactTest.cpp - .ampgpu reading, writing and checking -----------===//
//
// The parts of the CUDA runtime that need no GPU: a written artifact reads
// back identically; truncated, corrupted, wrong-version and inconsistent
// files are clear errors, never crashes.
//
//===----------------------------------------------------------------------===//

#include "amp_gpu/Artifact.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

using namespace amp_gpu;

namespace {

/// Two inputs, one weight, a kernel, a GEMM and a copy.
Artifact makeArtifact() {
  Artifact a;
  a.producer = "test";
  a.source = "model.onnx";
  a.weights.assign(512, '\x7f');
  a.buffers = {
      {BufferKind::Arena, 64 * 2, 0, "x"},
      {BufferKind::Weight, 64 * 2, 256, "w"},
      {BufferKind::Arena, 64 * 4, 256, "y"},
      {BufferKind::Arena, 64 * 4, 512, "z"},
  };
  a.arenaSize = 768;
  a.inputs = {{"x", DType::F16, {8, 8}, {0, 0}}};
  a.outputs = {{"z", DType::F32, {8, 8}, {3, 0}}};
  a.modules = {{ModuleFormat::Cubin, "sm_90",
                std::string("\x7f"
                            "ELF",
                            4)},
               {ModuleFormat::Ptx, "sm_90", ".version 8.0"}};
  a.kernels = {{"Relu_0", {0, 1}}};
  Step gemm;
  gemm.kind = Step::Kind::Gemm;
  gemm.name = "MatMul_1";
  gemm.gemm.m = gemm.gemm.n = gemm.gemm.k = 8;
  gemm.gemm.lda = gemm.gemm.ldb = gemm.gemm.ldc = 8;
  gemm.gemm.beta = 0;
  gemm.gemm.a = {0, 0};
  gemm.gemm.b = {1, 0};
  gemm.gemm.c = {2, 0};
  Step kernel;
  kernel.kind = Step::Kind::Kernel;
  kernel.name = "Relu_0";
  kernel.grid[0] = 1;
  kernel.block[0] = 64;
  KernelArg in;
  in.ref = {2, 0};
  in.sizes = {8, 8};
  in.strides = {8, 1};
  KernelArg out = in;
  out.ref = {3, 0};
  KernelArg scalar;
  scalar.kind = KernelArg::Kind::F32;
  scalar.bits = 0x3f800000;
  kernel.args = {in, out, scalar};
  Step copy;
  copy.kind = Step::Kind::Copy;
  copy.name = "Identity_2";
  copy.src = {2, 0};
  copy.dst = {3, 0};
  copy.bytes = 256;
  a.steps = {gemm, kernel, copy};
  return a;
}

std::string parseError(const std::string &bytes) {
  Artifact parsed;
  std::string error;
  EXPECT_FALSE(parseArtifact(bytes, parsed, error));
  return error;
}

/// Rewrites the header's checksum after a deliberate edit, so that the
/// structural checks (not the checksum) are what catches it.
void rehash(std::string &bytes) { resealArtifact(bytes); }

TEST(ArtifactTest, RoundTrips) {
  Artifact a = makeArtifact();
  std::string error;
  ASSERT_TRUE(validateArtifact(a, error)) << error;
  std::string bytes = serializeArtifact(a);
  Artifact b;
  ASSERT_TRUE(parseArtifact(bytes, b, error)) << error;
  EXPECT_EQ(serializeArtifact(b), bytes);
  EXPECT_EQ(b.source, "model.onnx");
  ASSERT_EQ(b.steps.size(), 3u);
  EXPECT_EQ(b.steps[0].gemm.beta, 0.0f);
  EXPECT_EQ(b.steps[1].args[2].bits, 0x3f800000u);
  EXPECT_EQ(b.steps[1].args[0].strides, (std::vector<int64_t>{8, 1}));
  EXPECT_EQ(b.modules[0].bytes, a.modules[0].bytes);
  EXPECT_EQ(b.weights, a.weights);
  std::string listing = describeArtifact(b);
  EXPECT_NE(listing.find("gemm f16xf16->f32"), std::string::npos) << listing;
  EXPECT_NE(listing.find("kernel Relu_0 grid(1,1,1) block(64,1,1)"),
            std::string::npos)
      << listing;
}

TEST(ArtifactTest, RejectsBadMagicVersionAndSize) {
  std::string bytes = serializeArtifact(makeArtifact());
  EXPECT_NE(parseError("hello").find("bad magic"), std::string::npos);
  std::string version = bytes;
  version[8] = 2;
  EXPECT_NE(parseError(version).find("format version 2"), std::string::npos);
  EXPECT_NE(parseError(bytes.substr(0, bytes.size() - 1)).find("truncated"),
            std::string::npos);
  EXPECT_NE(parseError(bytes + "x").find("header says"), std::string::npos);
}

TEST(ArtifactTest, EveryTruncationIsAnError) {
  std::string bytes = serializeArtifact(makeArtifact());
  for (size_t size = 0; size < bytes.size(); size += 7)
    EXPECT_FALSE(parseError(bytes.substr(0, size)).empty()) << size;
}

TEST(ArtifactTest, CorruptionIsCaughtByTheChecksum) {
  std::string bytes = serializeArtifact(makeArtifact());
  std::mt19937 rng(1);
  for (int i = 0; i < 200; ++i) {
    std::string corrupt = bytes;
    size_t at = 32 + rng() % (bytes.size() - 32);
    corrupt[at] ^= static_cast<char>(1 + rng() % 255);
    EXPECT_NE(parseError(corrupt).find("checksum"), std::string::npos);
  }
}

TEST(ArtifactTest, RehashedCorruptionNeverCrashes) {
  // Flipped bytes with a valid checksum reach the section decoders and
  // the validator: every outcome is a clean parse or a clean error.
  std::string bytes = serializeArtifact(makeArtifact());
  std::mt19937 rng(2);
  int pastChecksum = 0, decoderErrors = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string corrupt = bytes;
    for (int j = 0; j < 3; ++j)
      corrupt[32 + rng() % (bytes.size() - 32)] = static_cast<char>(rng());
    rehash(corrupt);
    Artifact parsed;
    std::string error;
    if (!parseArtifact(corrupt, parsed, error)) {
      EXPECT_FALSE(error.empty());
      // Re-hashed: the checksum must never be what stops a case, or the
      // decoders behind it go untested.
      EXPECT_EQ(error.find("checksum"), std::string::npos) << error;
      ++decoderErrors;
    }
    if (error.find("checksum") == std::string::npos)
      ++pastChecksum;
  }
  EXPECT_EQ(pastChecksum, 2000);
  // Three random bytes in the sections break most artifacts: the decoders
  // and the validator were reached and said no.
  EXPECT_GT(decoderErrors, 500);
}

TEST(ArtifactTest, ValidationCatchesOutOfBoundsOperands) {
  std::string error;
  Artifact a = makeArtifact();
  a.steps[1].args[0].sizes = {9, 8}; // 72 floats in a 64-float buffer
  EXPECT_FALSE(validateArtifact(a, error));
  EXPECT_NE(error.find("operand 0"), std::string::npos) << error;

  a = makeArtifact();
  a.steps[0].gemm.k = 16; // A is 8x8
  EXPECT_FALSE(validateArtifact(a, error));
  EXPECT_NE(error.find("(MatMul_1) A"), std::string::npos) << error;

  a = makeArtifact();
  a.buffers[3].offset = 768; // past the arena
  EXPECT_FALSE(validateArtifact(a, error));
  EXPECT_NE(error.find("outside the arena"), std::string::npos) << error;

  a = makeArtifact();
  a.steps[1].kernel = 5;
  EXPECT_FALSE(validateArtifact(a, error));
  EXPECT_NE(error.find("kernel 5 does not exist"), std::string::npos);

  a = makeArtifact();
  a.steps[2].dst = {1, 0}; // a copy into a weight
  a.steps[2].bytes = 128;
  EXPECT_FALSE(validateArtifact(a, error));
  EXPECT_NE(error.find("writes a weight"), std::string::npos) << error;

  a = makeArtifact();
  a.steps[1].block[0] = 2048;
  EXPECT_FALSE(validateArtifact(a, error));
  EXPECT_NE(error.find("1024 threads"), std::string::npos);

  a = makeArtifact();
  a.outputs[0].shape = {8, 9};
  EXPECT_FALSE(validateArtifact(a, error));
  EXPECT_NE(error.find("output 'z'"), std::string::npos) << error;
}

TEST(ArtifactTest, ViewExtent) {
  EXPECT_EQ(viewExtentBytes(0, {2, 3}, {3, 1}, 4), 24);
  EXPECT_EQ(viewExtentBytes(5, {2, 3}, {1, 2}, 2), (5 + 1 + 4 + 1) * 2);
  EXPECT_EQ(viewExtentBytes(0, {0, 3}, {3, 1}, 4), 0);
  EXPECT_EQ(viewExtentBytes(0, {2}, {-1}, 4), -1);
  EXPECT_EQ(viewExtentBytes(0, {int64_t(1) << 62, 4}, {4, 1}, 8), -1);
  // Found by fuzzing: many dimensions of huge sizes and strides overflowed
  // the __int128 running sum (undefined behaviour) before the final check.
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(viewExtentBytes(0, std::vector<int64_t>(8, big),
                            std::vector<int64_t>(8, big), 8),
            -1);
}

} // namespace

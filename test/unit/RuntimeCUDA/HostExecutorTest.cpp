//===- HostExecutorTest.cpp - the CUDA emulation's schedule executor ------===//
//
// planGemm + runGemmOnHost against the artifact's row-major definition of a
// GEMM (computed here in double, independently of the column-major
// translation), and HostProgram on hand-built artifacts: parameters packed
// as the CUDA runtime packs them, the arena poisoned with NaN.
//
//===----------------------------------------------------------------------===//

#include "amp_gpu/HostExecutor.h"
#include "amp/Runtime/FloatConversion.h"
#include "amp_gpu/GemmPlan.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace amp_gpu;

namespace {

/// Element (i, j) of op(M) for a row-major matrix with row stride `ld`.
double rowMajor(const std::vector<double> &m, int64_t base, bool trans,
                int64_t ld, int64_t i, int64_t j) {
  return trans ? m[base + j * ld + i] : m[base + i * ld + j];
}

struct GemmCase {
  bool transA, transB;
  int64_t batch;
  float alpha, beta;
  DType inType;
};

class GemmPlanTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmPlanTest, MatchesTheRowMajorDefinition) {
  const GemmCase &p = GetParam();
  const int64_t m = 5, n = 4, k = 3, pad = 2;
  Gemm g;
  g.aType = g.bType = p.inType;
  g.cType = DType::F32;
  g.transA = p.transA;
  g.transB = p.transB;
  g.batch = p.batch;
  g.m = m;
  g.n = n;
  g.k = k;
  // Row-major: A is m x k (k x m transposed), B k x n (n x k), C m x n,
  // every row padded and every batch padded further.
  int64_t aRows = p.transA ? k : m, aCols = p.transA ? m : k;
  int64_t bRows = p.transB ? n : k, bCols = p.transB ? k : n;
  g.lda = aCols + pad;
  g.ldb = bCols + pad;
  g.ldc = n + pad;
  g.strideA = aRows * g.lda + 7;
  g.strideB = bRows * g.ldb + 5;
  g.strideC = m * g.ldc + 3;
  g.alpha = p.alpha;
  g.beta = p.beta;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  auto fill = [&](int64_t count, DType type, std::vector<double> &values,
                  std::vector<char> &bytes) {
    values.resize(count);
    bytes.resize(count * dtypeSize(type));
    for (int64_t i = 0; i < count; ++i) {
      float v = uniform(rng);
      if (type == DType::F16) {
        uint16_t bits = amp_runtime::floatToHalfBits(v);
        std::memcpy(bytes.data() + 2 * i, &bits, 2);
        v = amp_runtime::halfBitsToFloat(bits);
      } else {
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      }
      values[i] = v;
    }
  };
  std::vector<double> a, b, c;
  std::vector<char> aBytes, bBytes, cBytes;
  fill(p.batch * g.strideA, g.aType, a, aBytes);
  fill(p.batch * g.strideB, g.bType, b, bBytes);
  fill(p.batch * g.strideC, DType::F32, c, cBytes);
  if (p.beta == 0) // C must not be read
    for (size_t i = 0; i < c.size(); ++i) {
      float nan = std::nanf("");
      std::memcpy(cBytes.data() + 4 * i, &nan, 4);
    }
  std::vector<char> before = cBytes;

  ColumnMajorGemm plan = planGemm(g);
  std::string error;
  ASSERT_TRUE(checkGemmPlan(plan, error)) << error;
  runGemmOnHost(plan, bBytes.data(), aBytes.data(), cBytes.data());

  for (int64_t t = 0; t < p.batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n + pad; ++j) {
        int64_t index = t * g.strideC + i * g.ldc + j;
        float got;
        std::memcpy(&got, cBytes.data() + 4 * index, 4);
        if (j >= n) { // padding is left alone
          EXPECT_EQ(0, std::memcmp(&got, before.data() + 4 * index, 4));
          continue;
        }
        double want = 0;
        for (int64_t l = 0; l < k; ++l)
          want += rowMajor(a, t * g.strideA, p.transA, g.lda, i, l) *
                  rowMajor(b, t * g.strideB, p.transB, g.ldb, l, j);
        want *= p.alpha;
        if (p.beta != 0)
          want += p.beta * c[index];
        EXPECT_NEAR(got, want, 1e-5)
            << "batch " << t << " (" << i << ", " << j << ")";
      }
}

INSTANTIATE_TEST_SUITE_P(
    AllSettings, GemmPlanTest,
    ::testing::Values(GemmCase{false, false, 1, 1, 0, DType::F32},
                      GemmCase{true, false, 1, 1, 0, DType::F32},
                      GemmCase{false, true, 1, 1, 1, DType::F32},
                      GemmCase{true, true, 3, 1, 0, DType::F32},
                      GemmCase{false, true, 3, 0.5f, 1, DType::F16},
                      GemmCase{true, false, 2, 2, 0.25f, DType::F16}));

TEST(GemmPlanTest, RefusesWhatCublasLtRefuses) {
  Gemm g;
  g.m = 4;
  g.n = 3;
  g.k = 2;
  g.lda = 2;
  g.ldb = 3;
  g.ldc = 3;
  std::string error;
  EXPECT_TRUE(checkGemmPlan(planGemm(g), error)) << error;
  g.ldc = 2; // C^T is 3 x 4 column-major: ld 2 < 3 rows
  EXPECT_FALSE(checkGemmPlan(planGemm(g), error));
  EXPECT_NE(error.find("the result (C): leading dimension 2"),
            std::string::npos)
      << error;
  g.ldc = 3;
  g.k = 0;
  EXPECT_FALSE(checkGemmPlan(planGemm(g), error));
  g.k = 2;
  g.batch = 0;
  EXPECT_FALSE(checkGemmPlan(planGemm(g), error));
  EXPECT_NE(error.find("batch count 0"), std::string::npos) << error;
}

/// A host kernel as the emulation compiles them: out[i] = in[i] * s over a
/// 1-D view, one element per thread (params: in, out as memrefs of rank 1,
/// then s, then the grid's and the block's x, y, z).
void scaleKernel(void **params) {
  auto slot = [&](int i) { return *static_cast<int64_t *>(params[i]); };
  auto *in = *static_cast<float **>(params[1]);
  int64_t inOffset = slot(2), size = slot(3), inStride = slot(4);
  auto *out = *static_cast<float **>(params[6]);
  int64_t outOffset = slot(7), outStride = slot(9);
  float s = *static_cast<float *>(params[10]);
  int64_t threads =
      slot(11) * slot(12) * slot(13) * slot(14) * slot(15) * slot(16);
  for (int64_t i = 0; i < threads && i < size; ++i)
    out[outOffset + i * outStride] = in[inOffset + i * inStride] * s;
}

/// y = x w (GEMM, 2x3 by 3x4), z = 2 y (kernel), output z.
Artifact makeProgram(bool transA) {
  Artifact a;
  a.producer = "test";
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i)
    w[i] = 0.5f * float(i) - 2;
  a.weights.assign(reinterpret_cast<const char *>(w.data()), 48);
  a.buffers = {{BufferKind::Arena, 24, 0, "x"},
               {BufferKind::Weight, 48, 0, "w"},
               {BufferKind::Arena, 32, 256, "y"},
               {BufferKind::Arena, 32, 512, "z"}};
  a.arenaSize = 768;
  a.inputs = {{"x",
               DType::F32,
               transA ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3},
               {0, 0}}};
  a.outputs = {{"z", DType::F32, {2, 4}, {3, 0}}};
  a.modules = {{ModuleFormat::Host, "host", ""}};
  a.kernels = {{"scale", {0}}};
  Step gemm;
  gemm.kind = Step::Kind::Gemm;
  gemm.name = "MatMul_0";
  gemm.gemm.aType = gemm.gemm.bType = gemm.gemm.cType = DType::F32;
  gemm.gemm.transA = transA;
  gemm.gemm.m = 2;
  gemm.gemm.n = 4;
  gemm.gemm.k = 3;
  gemm.gemm.lda = transA ? 2 : 3;
  gemm.gemm.ldb = 4;
  gemm.gemm.ldc = 4;
  gemm.gemm.beta = 0;
  gemm.gemm.a = {0, 0};
  gemm.gemm.b = {1, 0};
  gemm.gemm.c = {2, 0};
  Step kernel;
  kernel.kind = Step::Kind::Kernel;
  kernel.name = "Mul_1";
  kernel.block[0] = 8;
  KernelArg in;
  in.ref = {2, 0};
  in.sizes = {8};
  in.strides = {1};
  KernelArg out = in;
  out.ref = {3, 0};
  KernelArg scale;
  scale.kind = KernelArg::Kind::F32;
  float two = 2;
  uint32_t bits;
  std::memcpy(&bits, &two, 4);
  scale.bits = bits;
  kernel.args = {in, out, scale};
  a.steps = {gemm, kernel};
  return a;
}

TEST(HostProgramTest, RunsTheSchedule) {
  for (bool transA : {false, true}) {
    Artifact artifact = makeProgram(transA);
    std::vector<float> w(artifact.weights.size() / 4);
    std::memcpy(w.data(), artifact.weights.data(), artifact.weights.size());
    std::string error;
    auto program =
        HostProgram::create(std::move(artifact), {&scaleKernel}, error);
    ASSERT_TRUE(program) << error;
    const float x[6] = {1, -2, 3, 0.5f, 4, -1}; // row-major 2x3 (or 3x2)
    float z[8];
    ASSERT_TRUE(program->run({x}, {z}, error)) << error;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        float want = 0;
        for (int l = 0; l < 3; ++l)
          want += (transA ? x[l * 2 + i] : x[i * 3 + l]) * w[l * 4 + j];
        EXPECT_FLOAT_EQ(z[i * 4 + j], 2 * want) << transA << " " << i << j;
      }
  }
}

TEST(HostProgramTest, ReadingUnwrittenArenaBytesGivesNaN) {
  Artifact artifact = makeProgram(false);
  artifact.steps[0].gemm.beta = 1; // accumulates into y, never written
  std::string error;
  auto program =
      HostProgram::create(std::move(artifact), {&scaleKernel}, error);
  ASSERT_TRUE(program) << error;
  const float x[6] = {1, 2, 3, 4, 5, 6};
  float z[8];
  ASSERT_TRUE(program->run({x}, {z}, error)) << error;
  for (float v : z)
    EXPECT_TRUE(std::isnan(v));
}

TEST(HostProgramTest, RefusesBadArtifactsAndCalls) {
  std::string error;
  EXPECT_FALSE(HostProgram::create(makeProgram(false), {}, error));
  EXPECT_NE(error.find("1 kernels but 0 host functions"), std::string::npos)
      << error;
  Artifact badLd = makeProgram(false);
  badLd.steps[0].gemm.ldc = 3; // rows of 4 elements 3 apart
  EXPECT_FALSE(HostProgram::create(badLd, {&scaleKernel}, error));
  EXPECT_NE(error.find("C: bad matrix layout"), std::string::npos) << error;
  // Valid as an artifact, but cuBLASLt takes no empty matrix.
  Artifact empty = makeProgram(false);
  empty.steps[0].gemm.m = 0;
  EXPECT_FALSE(HostProgram::create(empty, {&scaleKernel}, error));
  EXPECT_NE(
      error.find(
          "cuBLASLt would refuse the GEMM: the second operand (A) is 3 x 0"),
      std::string::npos)
      << error;
  auto program = HostProgram::create(makeProgram(false), {&scaleKernel}, error);
  ASSERT_TRUE(program) << error;
  float z[8];
  EXPECT_FALSE(program->run({}, {z}, error));
  EXPECT_NE(error.find("1 inputs and 1 outputs"), std::string::npos) << error;
}

TEST(HostProgramTest, HostModulesAreNeverWritten) {
  std::string error;
  EXPECT_FALSE(writeArtifact("/tmp/amp-host-module-test.ampgpu",
                             makeProgram(false), error));
  EXPECT_NE(error.find("cannot be written"), std::string::npos) << error;
}

} // namespace

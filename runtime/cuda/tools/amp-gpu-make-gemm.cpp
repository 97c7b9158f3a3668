//===- amp-gpu-make-gemm.cpp - a one-GEMM artifact, for benchmarks --------===//
//
//   amp-gpu-make-gemm --m 8192 --n 8192 --k 8192 --dtype f16 -o gemm.ampgpu
//
// Writes an artifact with inputs "a" [batch, m, k] and "b" [batch, k, n]
// (or [batch, n, k] with --trans-b) in --dtype and output "c" [batch, m, n]
// in fp32 (fp32 compute): one cuBLASLt call. It needs no compiler, so GEMM
// benchmarks are generated on the GPU machine at any size.
//
//===----------------------------------------------------------------------===//

#include "amp_gpu/Artifact.h"
#include "amp_gpu/MemoryPlanner.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace amp_gpu;

int main(int argc, char **argv) {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool transB = false;
  std::string dtype = "f16", output;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto number = [&](int64_t &out) {
      if (i + 1 >= argc)
        return false;
      char *end = nullptr;
      out = std::strtoll(argv[++i], &end, 10);
      return end && !*end && out > 0;
    };
    bool ok = true;
    if (arg == "--m")
      ok = number(m);
    else if (arg == "--n")
      ok = number(n);
    else if (arg == "--k")
      ok = number(k);
    else if (arg == "--batch")
      ok = number(batch);
    else if (arg == "--trans-b")
      transB = true;
    else if (arg == "--dtype" && i + 1 < argc)
      dtype = argv[++i];
    else if (arg == "-o" && i + 1 < argc)
      output = argv[++i];
    else
      ok = false;
    if (!ok) {
      std::fprintf(stderr, "amp-gpu-make-gemm: error: bad argument '%s'\n",
                   arg.c_str());
      return 2;
    }
  }
  DType type = dtype == "f16"    ? DType::F16
               : dtype == "bf16" ? DType::BF16
               : dtype == "f32"  ? DType::F32
                                 : DType(0);
  if (!m || !n || !k || output.empty() || dtypeSize(type) == 0) {
    std::fprintf(stderr, "usage: amp-gpu-make-gemm --m M --n N --k K "
                         "[--batch B] [--trans-b] [--dtype f16|bf16|f32] "
                         "-o FILE\n");
    return 2;
  }
  Artifact a;
  a.producer = "amp-gpu-make-gemm";
  uint64_t elem = dtypeSize(type);
  std::vector<LiveRange> ranges = {{uint64_t(batch * m * k) * elem, 0, 0},
                                   {uint64_t(batch * k * n) * elem, 0, 0},
                                   {uint64_t(batch * m * n) * 4, 0, 0}};
  MemoryPlan plan = planMemory(ranges, kAlignment);
  const char *names[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i)
    a.buffers.push_back(
        {BufferKind::Arena, ranges[i].size, plan.offsets[i], names[i]});
  a.arenaSize = plan.peak;
  a.inputs = {{"a", type, {batch, m, k}, {0, 0}},
              {"b",
               type,
               transB ? std::vector<int64_t>{batch, n, k}
                      : std::vector<int64_t>{batch, k, n},
               {1, 0}}};
  a.outputs = {{"c", DType::F32, {batch, m, n}, {2, 0}}};
  Step step;
  step.kind = Step::Kind::Gemm;
  step.name = "gemm";
  Gemm &g = step.gemm;
  g.aType = g.bType = type;
  g.cType = DType::F32;
  g.transB = transB;
  g.batch = batch;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = k;
  g.ldb = transB ? k : n;
  g.ldc = n;
  g.strideA = batch > 1 ? m * k : 0;
  g.strideB = batch > 1 ? k * n : 0;
  g.strideC = batch > 1 ? m * n : 0;
  g.beta = 0;
  g.a = {0, 0};
  g.b = {1, 0};
  g.c = {2, 0};
  a.steps.push_back(step);
  std::string error;
  if (!validateArtifact(a, error) || !writeArtifact(output, a, error)) {
    std::fprintf(stderr, "amp-gpu-make-gemm: error: %s\n", error.c_str());
    return 1;
  }
  return 0;
}

//===- Runtime.cpp - loading and running .ampgpu artifacts with CUDA ------===//
//
// One stream per context. Loading validates the artifact, loads its device
// code (the cubin for the device's architecture, else PTX through the
// driver's JIT), uploads the weights, allocates the arena and resolves
// every step into ready launch arguments or cuBLASLt descriptors, so that
// executing is a loop of launches with no host work and no synchronisation.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"
#include "amp_gpu/Artifact.h"
#include "amp_gpu/GemmPlan.h"
#include "amp_gpu/HostExecutor.h"
#include "amp_gpu/amp_gpu.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace amp_gpu;

namespace amp_gpu::detail {

thread_local std::string lastError;

AmpStatus fail(const std::string &message, AmpStatus status) {
  lastError = message;
  return status;
}

bool cudaOk(cudaError_t status, const std::string &what) {
  if (status == cudaSuccess)
    return true;
  lastError = what + ": " + cudaGetErrorName(status) + " (" +
              cudaGetErrorString(status) + ")";
  return false;
}

} // namespace amp_gpu::detail

using namespace amp_gpu::detail;

namespace {

bool cublasOk(cublasStatus_t status, const std::string &what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return true;
  lastError = what + ": cuBLASLt status " + std::to_string(int(status));
  return false;
}

constexpr size_t kWorkspaceBytes = 32u << 20; // cuBLAS' Hopper recommendation

} // namespace

namespace {

/// A GEMM step, ready to call.
struct GemmCall {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  const void *x = nullptr, *y = nullptr; // column-major operands
  void *out = nullptr;
  bool f64 = false;
  float alpha = 1, beta = 1;
  double alpha64 = 1, beta64 = 1;
};

/// A kernel step: parameter storage and the pointers the launch reads.
struct KernelCall {
  cudaKernel_t kernel = nullptr;
  dim3 grid, block;
  unsigned shared = 0;
  std::vector<uint64_t> storage;
  std::vector<void *> params;
};

cudaDataType_t cudaType(DType type) {
  switch (type) {
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  case DType::F64:
    return CUDA_R_64F;
  default:
    return CUDA_R_32F;
  }
}

} // namespace

struct AmpProgram {
  AmpContext *context = nullptr;
  Artifact artifact;
  char *arena = nullptr, *weights = nullptr, *random = nullptr;
  std::vector<char *> bases; // each buffer's device address
  std::vector<cudaLibrary_t> libraries;
  std::vector<cudaKernel_t> kernels;
  std::vector<KernelCall> kernelCalls;
  std::vector<GemmCall> gemmCalls;
  std::vector<int> callOf; // step -> index into its kind's call list
  bool useGraph = false;
  cudaGraphExec_t graph = nullptr;

  char *address(const BufferRef &ref) const {
    return bases[ref.buffer] + ref.byteOffset;
  }
  ~AmpProgram();
  bool load();
  bool loadRandomWeights();
  bool loadModules();
  bool prepareKernel(const Step &step);
  bool prepareGemm(const Step &step);
  bool launch();
};

AmpProgram::~AmpProgram() {
  if (graph)
    cudaGraphExecDestroy(graph);
  for (GemmCall &g : gemmCalls) {
    if (g.desc)
      cublasLtMatmulDescDestroy(g.desc);
    if (g.a)
      cublasLtMatrixLayoutDestroy(g.a);
    if (g.b)
      cublasLtMatrixLayoutDestroy(g.b);
    if (g.c)
      cublasLtMatrixLayoutDestroy(g.c);
  }
  for (cudaLibrary_t library : libraries)
    if (library)
      cudaLibraryUnload(library);
  cudaFree(arena);
  cudaFree(weights);
  cudaFree(random);
}

/// Seeded uniform values for the weights left out of the file (SplitMix64;
/// fp16/bf16 rounded to nearest even).
bool AmpProgram::loadRandomWeights() {
  uint64_t total = 0;
  std::vector<uint64_t> offsets(artifact.buffers.size(), 0);
  for (size_t i = 0; i < artifact.buffers.size(); ++i)
    if (artifact.buffers[i].kind == BufferKind::Random) {
      offsets[i] = total;
      total +=
          (artifact.buffers[i].size + kAlignment - 1) / kAlignment * kAlignment;
    }
  if (!total)
    return true;
  if (!cudaOk(cudaMalloc(&random, total), "allocating the random weights"))
    return false;
  std::vector<char> host(total);
  for (size_t i = 0; i < artifact.buffers.size(); ++i) {
    const Buffer &b = artifact.buffers[i];
    if (b.kind != BufferKind::Random)
      continue;
    fillRandomBuffer(b, host.data() + offsets[i]);
    bases[i] = random + offsets[i];
  }
  return cudaOk(cudaMemcpy(random, host.data(), total, cudaMemcpyHostToDevice),
                "uploading the random weights");
}

bool AmpProgram::loadModules() {
  libraries.assign(artifact.modules.size(), nullptr);
  for (const Kernel &k : artifact.kernels) {
    // The cubin built for this device, else the PTX (JIT-compiled).
    int chosen = -1;
    for (uint32_t m : k.modules) {
      const Module &module = artifact.modules[m];
      if (module.format == ModuleFormat::Cubin && module.arch == context->arch)
        chosen = int(m);
    }
    for (uint32_t m : k.modules)
      if (chosen < 0 && artifact.modules[m].format == ModuleFormat::Ptx)
        chosen = int(m);
    if (chosen < 0) {
      lastError = "kernel '" + k.name + "': no code for " + context->arch +
                  " (cubins only for other architectures, no PTX)";
      return false;
    }
    cudaLibrary_t &library = libraries[chosen];
    if (!library) {
      std::string code = artifact.modules[chosen].bytes;
      code.push_back('\0'); // PTX is read as a C string
      if (!cudaOk(cudaLibraryLoadData(&library, code.data(), nullptr, nullptr,
                                      0, nullptr, nullptr, 0),
                  "loading the device code of kernel '" + k.name + "'"))
        return false;
    }
    cudaKernel_t kernel;
    if (!cudaOk(cudaLibraryGetKernel(&kernel, library, k.name.c_str()),
                "finding kernel '" + k.name + "'"))
      return false;
    kernels.push_back(kernel);
  }
  return true;
}

bool AmpProgram::prepareKernel(const Step &step) {
  KernelCall call;
  call.kernel = kernels[step.kernel];
  call.grid = dim3(step.grid[0], step.grid[1], step.grid[2]);
  call.block = dim3(step.block[0], step.block[1], step.block[2]);
  call.shared = step.sharedBytes;
  call.storage = packKernelParams(step, bases);
  for (uint64_t &slot : call.storage)
    call.params.push_back(&slot);
  kernelCalls.push_back(std::move(call));
  callOf.push_back(int(kernelCalls.size()) - 1);
  return true;
}

bool AmpProgram::prepareGemm(const Step &step) {
  const Gemm &g = step.gemm;
  std::string what = "GEMM '" + step.name + "'";
  GemmCall call;
  call.f64 = g.cType == DType::F64;
  call.alpha = g.alpha;
  call.beta = g.beta;
  call.alpha64 = g.alpha;
  call.beta64 = g.beta;
  // Row-major C = A B is column-major C^T = B^T A^T: B's memory is the
  // first operand, A's the second, and no data moves (planGemm; the CUDA
  // emulation runs the same plan on the host).
  ColumnMajorGemm plan = planGemm(g);
  cublasOperation_t opX = plan.transX ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opY = plan.transY ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasComputeType_t compute =
      call.f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = call.f64 ? CUDA_R_64F : CUDA_R_32F;
  if (!cublasOk(cublasLtMatmulDescCreate(&call.desc, compute, scale),
                what + " descriptor") ||
      !cublasOk(cublasLtMatmulDescSetAttribute(
                    call.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opX, sizeof(opX)),
                what) ||
      !cublasOk(cublasLtMatmulDescSetAttribute(
                    call.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opY, sizeof(opY)),
                what))
    return false;
  auto layout = [&](cublasLtMatrixLayout_t &out, const MatrixLayout &m) {
    int32_t batch = int32_t(plan.batch);
    int64_t strideElements = m.batchStride;
    return cublasOk(cublasLtMatrixLayoutCreate(&out, cudaType(m.type), m.rows,
                                               m.cols, m.ld),
                    what + " layout") &&
           cublasOk(cublasLtMatrixLayoutSetAttribute(
                        out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                        sizeof(batch)),
                    what) &&
           cublasOk(cublasLtMatrixLayoutSetAttribute(
                        out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                        &strideElements, sizeof(strideElements)),
                    what);
  };
  if (!layout(call.a, plan.x) || !layout(call.b, plan.y) ||
      !layout(call.c, plan.out))
    return false;
  cublasLtMatmulPreference_t preference;
  size_t workspace = kWorkspaceBytes;
  if (!cublasOk(cublasLtMatmulPreferenceCreate(&preference), what))
    return false;
  cublasLtMatmulPreferenceSetAttribute(preference,
                                       CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &workspace, sizeof(workspace));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      context->cublas, call.desc, call.a, call.b, call.c, call.c, preference, 1,
      &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (!cublasOk(status, what + " algorithm search"))
    return false;
  if (found == 0) {
    lastError = what + ": cuBLASLt has no algorithm for " + dtypeName(g.aType) +
                " x " + dtypeName(g.bType) + " -> " + dtypeName(g.cType);
    return false;
  }
  call.algo = result.algo;
  call.x = address(plan.xRef);
  call.y = address(plan.yRef);
  call.out = address(plan.outRef);
  gemmCalls.push_back(call);
  callOf.push_back(int(gemmCalls.size()) - 1);
  return true;
}

bool AmpProgram::load() {
  if (!cudaOk(cudaSetDevice(context->device), "selecting the device"))
    return false;
  if (artifact.arenaSize &&
      !cudaOk(cudaMalloc(&arena, artifact.arenaSize),
              "allocating the " + std::to_string(artifact.arenaSize) +
                  "-byte arena"))
    return false;
  if (!artifact.weights.empty() &&
      (!cudaOk(cudaMalloc(&weights, artifact.weights.size()),
               "allocating the weights") ||
       !cudaOk(cudaMemcpy(weights, artifact.weights.data(),
                          artifact.weights.size(), cudaMemcpyHostToDevice),
               "uploading the weights")))
    return false;
  bases.assign(artifact.buffers.size(), nullptr);
  for (size_t i = 0; i < artifact.buffers.size(); ++i) {
    const Buffer &b = artifact.buffers[i];
    if (b.kind == BufferKind::Arena)
      bases[i] = arena + b.offset;
    else if (b.kind == BufferKind::Weight)
      bases[i] = weights + b.offset;
  }
  if (!loadRandomWeights() || !loadModules())
    return false;
  for (const Step &step : artifact.steps) {
    bool ok = true;
    switch (step.kind) {
    case Step::Kind::Kernel:
      ok = prepareKernel(step);
      break;
    case Step::Kind::Gemm:
      ok = prepareGemm(step);
      break;
    case Step::Kind::Copy:
      callOf.push_back(-1);
      break;
    }
    if (!ok)
      return false;
  }
  // The host copy of the weights is no longer needed.
  std::string().swap(artifact.weights);
  return true;
}

bool AmpProgram::launch() {
  cudaStream_t stream = context->stream;
  for (size_t i = 0; i < artifact.steps.size(); ++i) {
    const Step &step = artifact.steps[i];
    std::string what;
    switch (step.kind) {
    case Step::Kind::Kernel: {
      KernelCall &call = kernelCalls[callOf[i]];
      if (!cudaOk(cudaLaunchKernel(reinterpret_cast<const void *>(call.kernel),
                                   call.grid, call.block, call.params.data(),
                                   call.shared, stream),
                  "step " + std::to_string(i) + " ('" + step.name +
                      "'): launching " + artifact.kernels[step.kernel].name))
        return false;
      break;
    }
    case Step::Kind::Gemm: {
      GemmCall &g = gemmCalls[callOf[i]];
      const void *alpha = g.f64 ? static_cast<const void *>(&g.alpha64)
                                : static_cast<const void *>(&g.alpha);
      const void *beta = g.f64 ? static_cast<const void *>(&g.beta64)
                               : static_cast<const void *>(&g.beta);
      if (!cublasOk(cublasLtMatmul(context->cublas, g.desc, alpha, g.x, g.a,
                                   g.y, g.b, beta, g.out, g.c, g.out, g.c,
                                   &g.algo, context->workspace, kWorkspaceBytes,
                                   stream),
                    "step " + std::to_string(i) + " ('" + step.name +
                        "'): cublasLtMatmul"))
        return false;
      break;
    }
    case Step::Kind::Copy:
      if (!cudaOk(cudaMemcpyAsync(address(step.dst), address(step.src),
                                  step.bytes, cudaMemcpyDeviceToDevice, stream),
                  "step " + std::to_string(i) + " ('" + step.name + "'): copy"))
        return false;
      break;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// C ABI
//===----------------------------------------------------------------------===//

extern "C" {

const char *ampGetLastError(void) { return lastError.c_str(); }

AmpStatus ampCreateContext(int device, AmpContext **context) {
  if (!context)
    return fail("ampCreateContext: null output pointer");
  *context = nullptr;
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    return fail(
        std::string("no CUDA device: ") +
            (status == cudaSuccess ? "none found" : cudaGetErrorString(status)),
        AMP_NO_DEVICE);
  if (device < 0 || device >= count)
    return fail("no CUDA device " + std::to_string(device) + " (there are " +
                std::to_string(count) + ")");
  auto result = std::make_unique<AmpContext>();
  result->device = device;
  cudaDeviceProp properties;
  if (!cudaOk(cudaSetDevice(device), "selecting the device") ||
      !cudaOk(cudaGetDeviceProperties(&properties, device),
              "reading the device properties") ||
      !cudaOk(cudaStreamCreateWithFlags(&result->stream, cudaStreamNonBlocking),
              "creating a stream") ||
      !cublasOk(cublasLtCreate(&result->cublas), "creating cuBLASLt") ||
      !cudaOk(cudaMalloc(&result->workspace, kWorkspaceBytes),
              "allocating the cuBLASLt workspace")) {
    ampDestroyContext(result.release());
    return AMP_ERROR;
  }
  result->arch = "sm_" + std::to_string(properties.major) +
                 std::to_string(properties.minor);
  *context = result.release();
  return AMP_OK;
}

void ampDestroyContext(AmpContext *context) {
  if (!context)
    return;
  if (context->cublas)
    cublasLtDestroy(context->cublas);
  if (context->stream)
    cudaStreamDestroy(context->stream);
  cudaFree(context->workspace);
  delete context;
}

AmpStatus ampLoad(AmpContext *context, const char *path, AmpProgram **program) {
  if (!context || !path || !program)
    return fail("ampLoad: null argument");
  *program = nullptr;
  auto result = std::make_unique<AmpProgram>();
  result->context = context;
  std::string error;
  if (!readArtifact(path, result->artifact, error))
    return fail(error);
  if (!result->load()) {
    lastError = std::string("'") + path + "': " + lastError;
    return AMP_ERROR;
  }
  *program = result.release();
  return AMP_OK;
}

void ampUnload(AmpProgram *program) {
  if (program) {
    cudaStreamSynchronize(program->context->stream);
    delete program;
  }
}

int ampGetNumInputs(const AmpProgram *program) {
  return program ? int(program->artifact.inputs.size()) : 0;
}
int ampGetNumOutputs(const AmpProgram *program) {
  return program ? int(program->artifact.outputs.size()) : 0;
}

AmpStatus ampGetTensorInfo(const AmpProgram *program, int isOutput, int index,
                           const char **name, int *dtype, int *rank,
                           const int64_t **shape, uint64_t *bytes) {
  if (!program)
    return fail("ampGetTensorInfo: null program");
  const auto &list =
      isOutput ? program->artifact.outputs : program->artifact.inputs;
  if (index < 0 || size_t(index) >= list.size())
    return fail(std::string("no ") + (isOutput ? "output " : "input ") +
                std::to_string(index));
  const TensorSignature &t = list[index];
  if (name)
    *name = t.name.c_str();
  if (dtype)
    *dtype = int(t.dtype);
  if (rank)
    *rank = int(t.shape.size());
  if (shape)
    *shape = t.shape.data();
  if (bytes)
    *bytes = t.byteSize();
  return AMP_OK;
}

AmpStatus ampSetInput(AmpProgram *program, int index, const void *host) {
  if (!program || !host || index < 0 ||
      size_t(index) >= program->artifact.inputs.size())
    return fail("ampSetInput: bad argument");
  const TensorSignature &t = program->artifact.inputs[index];
  return cudaOk(cudaMemcpyAsync(program->address(t.ref), host, t.byteSize(),
                                cudaMemcpyHostToDevice,
                                program->context->stream),
                "copying input '" + t.name + "'")
             ? AMP_OK
             : AMP_ERROR;
}

AmpStatus ampExecute(AmpProgram *program) {
  if (!program)
    return fail("ampExecute: null program");
  cudaStream_t stream = program->context->stream;
  if (!program->useGraph)
    return program->launch() ? AMP_OK : AMP_ERROR;
  if (!program->graph) {
    cudaGraph_t graph;
    if (!cudaOk(
            cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
            "starting graph capture"))
      return AMP_ERROR;
    bool launched = program->launch();
    std::string launchError = lastError;
    if (!cudaOk(cudaStreamEndCapture(stream, &graph), "ending graph capture"))
      return AMP_ERROR;
    if (!launched) {
      cudaGraphDestroy(graph);
      return fail(launchError);
    }
    cudaError_t status = cudaGraphInstantiate(&program->graph, graph, 0);
    cudaGraphDestroy(graph);
    if (!cudaOk(status, "instantiating the CUDA graph"))
      return AMP_ERROR;
  }
  return cudaOk(cudaGraphLaunch(program->graph, stream), "launching the graph")
             ? AMP_OK
             : AMP_ERROR;
}

AmpStatus ampSynchronize(AmpProgram *program) {
  if (!program)
    return fail("ampSynchronize: null program");
  return cudaOk(cudaStreamSynchronize(program->context->stream),
                "running the program")
             ? AMP_OK
             : AMP_ERROR;
}

AmpStatus ampGetOutput(AmpProgram *program, int index, void *host) {
  if (!program || !host || index < 0 ||
      size_t(index) >= program->artifact.outputs.size())
    return fail("ampGetOutput: bad argument");
  const TensorSignature &t = program->artifact.outputs[index];
  if (!cudaOk(cudaMemcpyAsync(host, program->address(t.ref), t.byteSize(),
                              cudaMemcpyDeviceToHost, program->context->stream),
              "copying output '" + t.name + "'"))
    return AMP_ERROR;
  return ampSynchronize(program);
}

AmpStatus ampRun(AmpProgram *program, const void *const *inputs,
                 void *const *outputs) {
  if (!program)
    return fail("ampRun: null program");
  for (int i = 0; i < ampGetNumInputs(program); ++i)
    if (ampSetInput(program, i, inputs ? inputs[i] : nullptr) != AMP_OK)
      return AMP_ERROR;
  if (ampExecute(program) != AMP_OK)
    return AMP_ERROR;
  for (int i = 0; i < ampGetNumOutputs(program); ++i)
    if (ampGetOutput(program, i, outputs ? outputs[i] : nullptr) != AMP_OK)
      return AMP_ERROR;
  return ampSynchronize(program);
}

AmpStatus ampSetGraphCapture(AmpProgram *program, int enable) {
  if (!program)
    return fail("ampSetGraphCapture: null program");
  program->useGraph = enable != 0;
  if (!program->useGraph && program->graph) {
    cudaGraphExecDestroy(program->graph);
    program->graph = nullptr;
  }
  return AMP_OK;
}

AmpStatus ampBenchmark(AmpProgram *program, int warmup, int iterations,
                       double *millisecondsPerRun) {
  if (!program || iterations < 1 || !millisecondsPerRun)
    return fail("ampBenchmark: bad argument");
  for (int i = 0; i < warmup; ++i)
    if (ampExecute(program) != AMP_OK)
      return AMP_ERROR;
  cudaEvent_t start, stop;
  cudaStream_t stream = program->context->stream;
  if (!cudaOk(cudaEventCreate(&start), "creating an event") ||
      !cudaOk(cudaEventCreate(&stop), "creating an event"))
    return AMP_ERROR;
  cudaEventRecord(start, stream);
  AmpStatus status = AMP_OK;
  for (int i = 0; i < iterations && status == AMP_OK; ++i)
    status = ampExecute(program);
  cudaEventRecord(stop, stream);
  float ms = 0;
  if (status == AMP_OK &&
      cudaOk(cudaEventSynchronize(stop), "running the program") &&
      cudaOk(cudaEventElapsedTime(&ms, start, stop), "reading the timer"))
    *millisecondsPerRun = ms / iterations;
  else
    status = AMP_ERROR;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return status;
}

AmpStatus ampDeviceAlloc(AmpContext *context, uint64_t bytes, void **device) {
  if (!context || !device)
    return fail("ampDeviceAlloc: null argument");
  *device = nullptr;
  if (!cudaOk(cudaSetDevice(context->device), "selecting the device") ||
      !cudaOk(cudaMalloc(device, bytes ? bytes : 1),
              "allocating " + std::to_string(bytes) + " bytes"))
    return AMP_ERROR;
  return AMP_OK;
}

void ampDeviceFree(AmpContext *context, void *device) {
  if (context && device) {
    cudaStreamSynchronize(context->stream);
    cudaFree(device);
  }
}

AmpStatus ampGetTensorAddress(AmpProgram *program, int isOutput, int index,
                              void **device) {
  if (!program || !device)
    return fail("ampGetTensorAddress: null argument");
  const auto &list =
      isOutput ? program->artifact.outputs : program->artifact.inputs;
  if (index < 0 || size_t(index) >= list.size())
    return fail(std::string("no ") + (isOutput ? "output " : "input ") +
                std::to_string(index));
  *device = program->address(list[index].ref);
  return AMP_OK;
}

AmpStatus ampCopyDevice(AmpContext *context, void *dst, const void *src,
                        uint64_t bytes) {
  if (!context || !dst || !src)
    return fail("ampCopyDevice: null argument");
  return cudaOk(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                context->stream),
                "copying on the device")
             ? AMP_OK
             : AMP_ERROR;
}

AmpStatus ampDeviceZero(AmpContext *context, void *device, uint64_t bytes) {
  if (!context || !device)
    return fail("ampDeviceZero: null argument");
  return cudaOk(cudaMemsetAsync(device, 0, bytes, context->stream),
                "zeroing device memory")
             ? AMP_OK
             : AMP_ERROR;
}

AmpStatus ampCopyToHost(AmpContext *context, void *host, const void *device,
                        uint64_t bytes) {
  if (!context || !host || !device)
    return fail("ampCopyToHost: null argument");
  return cudaOk(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                                context->stream),
                "copying to the host") &&
                 cudaOk(cudaStreamSynchronize(context->stream),
                        "waiting for the device")
             ? AMP_OK
             : AMP_ERROR;
}

AmpStatus ampCopyToDevice(AmpContext *context, void *device, const void *host,
                          uint64_t bytes) {
  if (!context || !host || !device)
    return fail("ampCopyToDevice: null argument");
  // Synchronous: `host` may be reused as soon as this returns.
  return cudaOk(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice,
                                context->stream),
                "copying to the device") &&
                 cudaOk(cudaStreamSynchronize(context->stream),
                        "waiting for the device")
             ? AMP_OK
             : AMP_ERROR;
}

AmpStatus ampContextSynchronize(AmpContext *context) {
  if (!context)
    return fail("ampContextSynchronize: null context");
  return cudaOk(cudaStreamSynchronize(context->stream),
                "waiting for the device")
             ? AMP_OK
             : AMP_ERROR;
}

} // extern "C"

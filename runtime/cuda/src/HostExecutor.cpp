//===- HostExecutor.cpp - an artifact's schedule run on the CPU -----------===//

#include "amp_gpu/HostExecutor.h"

#include "amp/Runtime/FloatConversion.h"
#include "amp_gpu/GemmPlan.h"

#include <cstdlib>
#include <cstring>

using namespace amp_gpu;

void amp_gpu::fillRandomBuffer(const Buffer &b, char *out) {
  uint64_t state = b.seed;
  uint64_t count = b.size / dtypeSize(b.dtype);
  for (uint64_t j = 0; j < count; ++j) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    float value = (float(z >> 40) / float(1 << 24) * 2 - 1) * b.scale;
    if (b.dtype == DType::F32) {
      std::memcpy(out + 4 * j, &value, 4);
    } else {
      uint16_t bits = b.dtype == DType::F16
                          ? amp_runtime::floatToHalfBits(value)
                          : amp_runtime::floatToBFloat16Bits(value);
      std::memcpy(out + 2 * j, &bits, 2);
    }
  }
}

std::vector<uint64_t>
amp_gpu::packKernelParams(const Step &step, const std::vector<char *> &bases) {
  std::vector<uint64_t> slots;
  for (const KernelArg &arg : step.args) {
    if (arg.kind != KernelArg::Kind::MemRef) {
      slots.push_back(arg.bits);
      continue;
    }
    uint64_t pointer =
        reinterpret_cast<uint64_t>(bases[arg.ref.buffer] + arg.ref.byteOffset);
    slots.push_back(pointer); // allocated
    slots.push_back(pointer); // aligned
    slots.push_back(static_cast<uint64_t>(arg.offset));
    for (int64_t size : arg.sizes)
      slots.push_back(static_cast<uint64_t>(size));
    for (int64_t stride : arg.strides)
      slots.push_back(static_cast<uint64_t>(stride));
  }
  return slots;
}

namespace {
char *allocateAligned(uint64_t bytes) {
  uint64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  return static_cast<char *>(std::aligned_alloc(kAlignment, rounded));
}
} // namespace

HostProgram::~HostProgram() {
  std::free(arena);
  std::free(weights);
}

std::unique_ptr<HostProgram>
HostProgram::create(Artifact artifact, std::vector<HostKernel> kernels,
                    std::string &error) {
  if (!validateArtifact(artifact, error))
    return nullptr;
  if (kernels.size() != artifact.kernels.size()) {
    error = "the artifact has " + std::to_string(artifact.kernels.size()) +
            " kernels but " + std::to_string(kernels.size()) +
            " host functions were given";
    return nullptr;
  }
  std::unique_ptr<HostProgram> program(new HostProgram());
  program->kernels = std::move(kernels);
  // Random buffers are placed after the weights, each on the alignment.
  uint64_t weightBytes = artifact.weights.size();
  std::vector<uint64_t> randomOffsets(artifact.buffers.size(), 0);
  for (size_t i = 0; i < artifact.buffers.size(); ++i)
    if (artifact.buffers[i].kind == BufferKind::Random) {
      weightBytes = (weightBytes + kAlignment - 1) / kAlignment * kAlignment;
      randomOffsets[i] = weightBytes;
      weightBytes += artifact.buffers[i].size;
    }
  program->arena = allocateAligned(artifact.arenaSize ? artifact.arenaSize : 1);
  program->weights = allocateAligned(weightBytes ? weightBytes : 1);
  if (!program->arena || !program->weights) {
    error = "cannot allocate the " + std::to_string(artifact.arenaSize) +
            "-byte arena and " + std::to_string(weightBytes) +
            " bytes of weights";
    return nullptr;
  }
  std::memcpy(program->weights, artifact.weights.data(),
              artifact.weights.size());
  program->bases.assign(artifact.buffers.size(), nullptr);
  for (size_t i = 0; i < artifact.buffers.size(); ++i) {
    const Buffer &b = artifact.buffers[i];
    switch (b.kind) {
    case BufferKind::Arena:
      program->bases[i] = program->arena + b.offset;
      break;
    case BufferKind::Weight:
      program->bases[i] = program->weights + b.offset;
      break;
    case BufferKind::Random:
      program->bases[i] = program->weights + randomOffsets[i];
      fillRandomBuffer(b, program->bases[i]);
      break;
    }
  }
  // Kernel parameters, packed as the CUDA runtime packs them, then the
  // grid's and the block's sizes.
  program->storage.resize(artifact.steps.size());
  program->params.resize(artifact.steps.size());
  for (size_t i = 0; i < artifact.steps.size(); ++i) {
    const Step &step = artifact.steps[i];
    std::string what = "step " + std::to_string(i) + " ('" + step.name + "')";
    if (step.kind == Step::Kind::Gemm) {
      if (!checkGemmPlan(planGemm(step.gemm), error)) {
        error = what + ": cuBLASLt would refuse the GEMM: " + error;
        return nullptr;
      }
      continue;
    }
    if (step.kind != Step::Kind::Kernel)
      continue;
    if (step.sharedBytes) {
      error = what + ": shared memory is not emulated";
      return nullptr;
    }
    std::vector<uint64_t> &slots = program->storage[i];
    slots = packKernelParams(step, program->bases);
    for (uint32_t d : step.grid)
      slots.push_back(d);
    for (uint32_t d : step.block)
      slots.push_back(d);
    for (uint64_t &slot : slots)
      program->params[i].push_back(&slot);
  }
  program->artifact = std::move(artifact);
  // The host copy of the weights is no longer needed.
  std::string().swap(program->artifact.weights);
  return program;
}

bool HostProgram::run(const std::vector<const void *> &inputs,
                      const std::vector<void *> &outputs, std::string &error) {
  if (inputs.size() != artifact.inputs.size() ||
      outputs.size() != artifact.outputs.size()) {
    error = "the artifact has " + std::to_string(artifact.inputs.size()) +
            " inputs and " + std::to_string(artifact.outputs.size()) +
            " outputs; " + std::to_string(inputs.size()) + " and " +
            std::to_string(outputs.size()) + " were given";
    return false;
  }
  // NaN in every float format: what is read before it is written shows.
  std::memset(arena, 0xff, artifact.arenaSize);
  for (size_t i = 0; i < inputs.size(); ++i)
    std::memcpy(address(artifact.inputs[i].ref), inputs[i],
                artifact.inputs[i].byteSize());
  for (size_t i = 0; i < artifact.steps.size(); ++i) {
    const Step &step = artifact.steps[i];
    switch (step.kind) {
    case Step::Kind::Kernel:
      kernels[step.kernel](params[i].data());
      break;
    case Step::Kind::Gemm: {
      ColumnMajorGemm plan = planGemm(step.gemm);
      runGemmOnHost(plan, address(plan.xRef), address(plan.yRef),
                    address(plan.outRef));
      break;
    }
    case Step::Kind::Copy:
      std::memmove(address(step.dst), address(step.src), step.bytes);
      break;
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    std::memcpy(outputs[i], address(artifact.outputs[i].ref),
                artifact.outputs[i].byteSize());
  return true;
}

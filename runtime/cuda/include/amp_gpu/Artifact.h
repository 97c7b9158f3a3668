//===- Artifact.h - the .ampgpu file: schedule, kernels, weights -*- C++
//-*-===//
//
// An amp GPU artifact is one file that `amp-opt --amp-target=cuda` writes
// on a CPU machine and the CUDA runtime loads on a GPU machine. It holds
// the host-side schedule (which kernel or library call runs in which order
// on which buffers), the device code (cubin and PTX), the weights in their
// storage precision, the memory plan (one device arena; buffers placed by
// liveness) and the named I/O signature. docs/CudaBackend.md describes the
// byte layout; this header is its one implementation, shared by the
// compiler (writer) and the runtime (reader). It needs nothing but the C++
// standard library.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_GPU_ARTIFACT_H
#define AMP_GPU_ARTIFACT_H

#include <cstdint>
#include <string>
#include <vector>

namespace amp_gpu {

constexpr char kMagic[8] = {'A', 'M', 'P', 'G', 'P', 'U', '\0', '\0'};
/// Bumped on every incompatible change of the layout below.
constexpr uint32_t kFormatVersion = 1;
/// Device buffers (arena slots, weights) start on this boundary.
constexpr uint64_t kAlignment = 256;

enum class DType : uint32_t {
  F32 = 1,
  F16 = 2,
  BF16 = 3,
  F64 = 4,
  I64 = 5,
  I32 = 6,
  I16 = 7,
  I8 = 8,
  U64 = 9,
  U32 = 10,
  U16 = 11,
  U8 = 12,
  Bool = 13,
};
/// Bytes per element; 0 for an unknown value.
uint64_t dtypeSize(DType type);
/// "f32", "f16", ... ("?" for an unknown value).
const char *dtypeName(DType type);

/// Where a buffer lives on the device.
enum class BufferKind : uint32_t {
  /// A slot of the device arena; `offset` is its place in the arena.
  Arena = 0,
  /// Constant data; `offset` is its place in the weights blob.
  Weight = 1,
  /// A float weight left out of the file (`amp-opt --amp-cuda-random-
  /// weights`, for benchmarks): the runtime fills it with seeded uniform
  /// values in [-scale, scale) of `dtype` when loading. `offset` is 0.
  Random = 2,
};

struct Buffer {
  BufferKind kind = BufferKind::Arena;
  uint64_t size = 0;        // bytes
  uint64_t offset = 0;      // in the arena or in the weights blob
  std::string name;         // for messages: the value it holds
  DType dtype = DType::F32; // Random: the element type
  float scale = 0;          // Random: the range
  uint64_t seed = 0;        // Random: the generator's seed
};

/// A place in a buffer.
struct BufferRef {
  uint32_t buffer = 0;
  uint64_t byteOffset = 0;
};

/// A named program input or output: a dense row-major tensor in `ref`.
struct TensorSignature {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  BufferRef ref;
  uint64_t byteSize() const;
};

/// Host: the kernels of the CUDA emulation (amp-run --amp-cuda-emulate),
/// compiled for the CPU by the process that built the artifact in memory;
/// the module holds no code and is never written to a file.
enum class ModuleFormat : uint32_t { Cubin = 1, Ptx = 2, Host = 3 };

struct Module {
  ModuleFormat format = ModuleFormat::Ptx;
  std::string arch; // "sm_90"
  std::string bytes;
};

struct Kernel {
  std::string name;              // the entry symbol
  std::vector<uint32_t> modules; // the same code in each format
};

/// One kernel parameter. A memref becomes MLIR's expanded descriptor:
/// allocated pointer, aligned pointer, offset, sizes, strides.
struct KernelArg {
  enum class Kind : uint32_t {
    MemRef = 0,
    I64 = 1,
    I32 = 2,
    F32 = 3,
    F64 = 4,
    B16 = 5, // f16, bf16, i16
    B8 = 6,  // i8, i1
  };
  Kind kind = Kind::MemRef;
  BufferRef ref; // MemRef
  DType dtype = DType::F32;
  int64_t offset = 0; // elements
  std::vector<int64_t> sizes, strides;
  uint64_t bits = 0; // scalars, as their bit pattern
};

/// Row-major C = alpha * op(A) x op(B) + beta * C, `batch` times.
struct Gemm {
  DType aType = DType::F16, bType = DType::F16, cType = DType::F32;
  uint32_t transA = 0, transB = 0;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;             // row strides, elements
  int64_t strideA = 0, strideB = 0, strideC = 0; // batch strides, elements
  float alpha = 1, beta = 1;
  BufferRef a, b, c;
};

struct Step {
  enum class Kind : uint32_t { Kernel = 1, Gemm = 2, Copy = 3 };
  Kind kind = Kind::Kernel;
  std::string name; // the op it comes from, for messages and profiles
  // Kernel
  uint32_t kernel = 0;
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  uint32_t sharedBytes = 0;
  std::vector<KernelArg> args;
  // Gemm
  Gemm gemm;
  // Copy (dense bytes)
  BufferRef src, dst;
  uint64_t bytes = 0;
};

struct Artifact {
  std::string producer; // "amp-opt <version>"
  std::string source;   // the model it was compiled from
  uint64_t arenaSize = 0;
  std::vector<Buffer> buffers;
  std::vector<TensorSignature> inputs, outputs;
  std::vector<Module> modules;
  std::vector<Kernel> kernels;
  std::vector<Step> steps;
  std::string weights;
};

/// The file's bytes (header, section table, sections; FNV-1a checksum).
std::string serializeArtifact(const Artifact &artifact);

/// Rewrites the header's size and checksum to match `bytes` (for tests and
/// fuzzing that edit a file on purpose and want the structural checks, not
/// the checksum, to judge it). No-op below the header's size.
void resealArtifact(std::string &bytes);

/// Parses and validates (`validateArtifact`) a file's bytes. On failure
/// returns false and sets `error` to what is wrong.
bool parseArtifact(const std::string &bytes, Artifact &artifact,
                   std::string &error);
/// Reads `path`; errors name the file.
bool readArtifact(const std::string &path, Artifact &artifact,
                  std::string &error);
/// Writes through a temporary file and a rename: no partial file remains.
bool writeArtifact(const std::string &path, const Artifact &artifact,
                   std::string &error);

/// Cross-checks: buffers inside the arena or the weights, references and
/// kernel operands inside their buffers, indices in range, shapes sane.
bool validateArtifact(const Artifact &artifact, std::string &error);

/// A readable listing of the artifact (for `amp-run-gpu --describe` and the
/// lit tests).
std::string describeArtifact(const Artifact &artifact);

/// Bytes a strided view reads: (offset + sum (size-1)*stride + 1) * elem,
/// 0 for an empty view; -1 when a stride or offset is negative or the
/// product overflows.
int64_t viewExtentBytes(int64_t offset, const std::vector<int64_t> &sizes,
                        const std::vector<int64_t> &strides, uint64_t elem);

} // namespace amp_gpu

#endif // AMP_GPU_ARTIFACT_H

//===- Artifact.cpp - writing, reading and checking .ampgpu files ---------===//

#include "amp_gpu/Artifact.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace amp_gpu {

uint64_t dtypeSize(DType type) {
  switch (type) {
  case DType::F64:
  case DType::I64:
  case DType::U64:
    return 8;
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 0;
}

const char *dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I16:
    return "i16";
  case DType::I8:
    return "i8";
  case DType::U64:
    return "ui64";
  case DType::U32:
    return "ui32";
  case DType::U16:
    return "ui16";
  case DType::U8:
    return "ui8";
  case DType::Bool:
    return "i1";
  }
  return "?";
}

uint64_t TensorSignature::byteSize() const {
  uint64_t n = dtypeSize(dtype);
  for (int64_t d : shape)
    n *= static_cast<uint64_t>(d < 0 ? 0 : d);
  return n;
}

int64_t viewExtentBytes(int64_t offset, const std::vector<int64_t> &sizes,
                        const std::vector<int64_t> &strides, uint64_t elem) {
  if (offset < 0 || sizes.size() != strides.size())
    return -1;
  __int128 last = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || strides[i] < 0)
      return -1;
    if (sizes[i] == 0)
      return 0;
    last += static_cast<__int128>(sizes[i] - 1) * strides[i];
    // Each term is below 2^126; stopping once past int64 keeps the sum
    // inside __int128 whatever the number of dimensions.
    if (last > std::numeric_limits<int64_t>::max())
      return -1;
  }
  __int128 bytes = (last + 1) * static_cast<__int128>(elem);
  if (bytes > std::numeric_limits<int64_t>::max())
    return -1;
  return static_cast<int64_t>(bytes);
}

//===----------------------------------------------------------------------===//
// Byte layout
//===----------------------------------------------------------------------===//

namespace {

enum SectionKind : uint32_t {
  kMeta = 1,
  kBuffers = 2,
  kSignature = 3,
  kModules = 4,
  kKernels = 5,
  kSteps = 6,
  kWeights = 7,
};
constexpr size_t kHeaderSize = 32;   // magic, version, count, size, hash
constexpr size_t kSectionEntry = 24; // kind, reserved, offset, size

uint64_t fnv1a(const char *data, size_t size) {
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(data[i]);
    hash *= 1099511628211ull;
  }
  return hash;
}

class Writer {
public:
  std::string out;
  template <typename T> void raw(T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.append(bytes, sizeof(T));
  }
  void u32(uint32_t v) { raw(v); }
  void u64(uint64_t v) { raw(v); }
  void i64(int64_t v) { raw(v); }
  void f32(float v) { raw(v); }
  void str(const std::string &s) {
    u64(s.size());
    out += s;
  }
  void i64s(const std::vector<int64_t> &v) {
    u64(v.size());
    for (int64_t x : v)
      i64(x);
  }
  void ref(const BufferRef &r) {
    u32(r.buffer);
    u64(r.byteOffset);
  }
};

/// Bounds-checked reads; the first failure sticks and names the section.
class Reader {
public:
  Reader(const char *data, size_t size, const char *section)
      : data(data), size(size), section(section) {}
  bool ok() const { return error.empty(); }
  std::string error;

  template <typename T> T raw() {
    T value{};
    if (!take(sizeof(T)))
      return value;
    std::memcpy(&value, data + pos - sizeof(T), sizeof(T));
    return value;
  }
  uint32_t u32() { return raw<uint32_t>(); }
  uint64_t u64() { return raw<uint64_t>(); }
  int64_t i64() { return raw<int64_t>(); }
  float f32() { return raw<float>(); }
  /// A count of items of at least `minBytes` each: never more than the
  /// bytes left could hold, so a corrupt count cannot allocate much.
  uint64_t count(size_t minBytes) {
    uint64_t n = u64();
    if (ok() && minBytes && n > (size - pos) / minBytes)
      fail("a count of " + std::to_string(n) + " runs past the end");
    return ok() ? n : 0;
  }
  std::string str() {
    uint64_t n = count(1);
    if (!take(n))
      return {};
    return std::string(data + pos - n, n);
  }
  std::vector<int64_t> i64s() {
    std::vector<int64_t> v(count(8));
    for (int64_t &x : v)
      x = i64();
    return v;
  }
  BufferRef ref() {
    BufferRef r;
    r.buffer = u32();
    r.byteOffset = u64();
    return r;
  }
  void fail(const std::string &why) {
    if (error.empty())
      error = std::string("section '") + section + "': " + why;
  }
  bool atEnd() const { return pos == size; }

private:
  bool take(uint64_t n) {
    if (!ok())
      return false;
    if (n > size - pos) {
      fail("truncated");
      return false;
    }
    pos += n;
    return true;
  }
  const char *data;
  size_t size;
  size_t pos = 0;
  const char *section;
};

void writeSignature(Writer &w, const std::vector<TensorSignature> &list) {
  w.u64(list.size());
  for (const TensorSignature &t : list) {
    w.str(t.name);
    w.u32(static_cast<uint32_t>(t.dtype));
    w.i64s(t.shape);
    w.ref(t.ref);
  }
}

void readSignature(Reader &r, std::vector<TensorSignature> &list) {
  list.resize(r.count(8 + 4 + 8 + 12));
  for (TensorSignature &t : list) {
    t.name = r.str();
    t.dtype = static_cast<DType>(r.u32());
    t.shape = r.i64s();
    t.ref = r.ref();
  }
}

std::string encodeSection(const Artifact &a, uint32_t kind) {
  Writer w;
  switch (kind) {
  case kMeta:
    w.str(a.producer);
    w.str(a.source);
    w.u64(a.arenaSize);
    break;
  case kBuffers:
    w.u64(a.buffers.size());
    for (const Buffer &b : a.buffers) {
      w.u32(static_cast<uint32_t>(b.kind));
      w.u64(b.size);
      w.u64(b.offset);
      w.str(b.name);
      w.u32(static_cast<uint32_t>(b.dtype));
      w.f32(b.scale);
      w.u64(b.seed);
    }
    break;
  case kSignature:
    writeSignature(w, a.inputs);
    writeSignature(w, a.outputs);
    break;
  case kModules:
    w.u64(a.modules.size());
    for (const Module &m : a.modules) {
      w.u32(static_cast<uint32_t>(m.format));
      w.str(m.arch);
      w.str(m.bytes);
    }
    break;
  case kKernels:
    w.u64(a.kernels.size());
    for (const Kernel &k : a.kernels) {
      w.str(k.name);
      w.u64(k.modules.size());
      for (uint32_t m : k.modules)
        w.u32(m);
    }
    break;
  case kSteps:
    w.u64(a.steps.size());
    for (const Step &s : a.steps) {
      w.u32(static_cast<uint32_t>(s.kind));
      w.str(s.name);
      switch (s.kind) {
      case Step::Kind::Kernel:
        w.u32(s.kernel);
        for (uint32_t v : s.grid)
          w.u32(v);
        for (uint32_t v : s.block)
          w.u32(v);
        w.u32(s.sharedBytes);
        w.u64(s.args.size());
        for (const KernelArg &arg : s.args) {
          w.u32(static_cast<uint32_t>(arg.kind));
          if (arg.kind == KernelArg::Kind::MemRef) {
            w.ref(arg.ref);
            w.u32(static_cast<uint32_t>(arg.dtype));
            w.i64(arg.offset);
            w.i64s(arg.sizes);
            w.i64s(arg.strides);
          } else {
            w.u64(arg.bits);
          }
        }
        break;
      case Step::Kind::Gemm: {
        const Gemm &g = s.gemm;
        w.u32(static_cast<uint32_t>(g.aType));
        w.u32(static_cast<uint32_t>(g.bType));
        w.u32(static_cast<uint32_t>(g.cType));
        w.u32(g.transA);
        w.u32(g.transB);
        for (int64_t v : {g.batch, g.m, g.n, g.k, g.lda, g.ldb, g.ldc,
                          g.strideA, g.strideB, g.strideC})
          w.i64(v);
        w.f32(g.alpha);
        w.f32(g.beta);
        w.ref(g.a);
        w.ref(g.b);
        w.ref(g.c);
        break;
      }
      case Step::Kind::Copy:
        w.ref(s.src);
        w.ref(s.dst);
        w.u64(s.bytes);
        break;
      }
    }
    break;
  case kWeights:
    w.out = a.weights;
    break;
  }
  return std::move(w.out);
}

bool decodeSection(const char *data, size_t size, uint32_t kind, Artifact &a,
                   std::string &error) {
  static const char *names[] = {"?",       "meta",    "buffers", "signature",
                                "modules", "kernels", "steps",   "weights"};
  Reader r(data, size, kind < 8 ? names[kind] : "?");
  switch (kind) {
  case kMeta:
    a.producer = r.str();
    a.source = r.str();
    a.arenaSize = r.u64();
    break;
  case kBuffers:
    a.buffers.resize(r.count(4 + 8 + 8 + 8 + 4 + 4 + 8));
    for (Buffer &b : a.buffers) {
      b.kind = static_cast<BufferKind>(r.u32());
      b.size = r.u64();
      b.offset = r.u64();
      b.name = r.str();
      b.dtype = static_cast<DType>(r.u32());
      b.scale = r.f32();
      b.seed = r.u64();
    }
    break;
  case kSignature:
    readSignature(r, a.inputs);
    readSignature(r, a.outputs);
    break;
  case kModules:
    a.modules.resize(r.count(4 + 8 + 8));
    for (Module &m : a.modules) {
      m.format = static_cast<ModuleFormat>(r.u32());
      m.arch = r.str();
      m.bytes = r.str();
    }
    break;
  case kKernels:
    a.kernels.resize(r.count(8 + 8));
    for (Kernel &k : a.kernels) {
      k.name = r.str();
      k.modules.resize(r.count(4));
      for (uint32_t &m : k.modules)
        m = r.u32();
    }
    break;
  case kSteps:
    a.steps.resize(r.count(4 + 8));
    for (Step &s : a.steps) {
      if (!r.ok())
        break;
      s.kind = static_cast<Step::Kind>(r.u32());
      s.name = r.str();
      switch (s.kind) {
      case Step::Kind::Kernel:
        s.kernel = r.u32();
        for (uint32_t &v : s.grid)
          v = r.u32();
        for (uint32_t &v : s.block)
          v = r.u32();
        s.sharedBytes = r.u32();
        s.args.resize(r.count(4 + 8));
        for (KernelArg &arg : s.args) {
          arg.kind = static_cast<KernelArg::Kind>(r.u32());
          if (arg.kind == KernelArg::Kind::MemRef) {
            arg.ref = r.ref();
            arg.dtype = static_cast<DType>(r.u32());
            arg.offset = r.i64();
            arg.sizes = r.i64s();
            arg.strides = r.i64s();
          } else if (static_cast<uint32_t>(arg.kind) <= 6) {
            arg.bits = r.u64();
          } else {
            r.fail("unknown kernel argument kind " +
                   std::to_string(static_cast<uint32_t>(arg.kind)));
          }
        }
        break;
      case Step::Kind::Gemm: {
        Gemm &g = s.gemm;
        g.aType = static_cast<DType>(r.u32());
        g.bType = static_cast<DType>(r.u32());
        g.cType = static_cast<DType>(r.u32());
        g.transA = r.u32();
        g.transB = r.u32();
        for (int64_t *v : {&g.batch, &g.m, &g.n, &g.k, &g.lda, &g.ldb, &g.ldc,
                           &g.strideA, &g.strideB, &g.strideC})
          *v = r.i64();
        g.alpha = r.f32();
        g.beta = r.f32();
        g.a = r.ref();
        g.b = r.ref();
        g.c = r.ref();
        break;
      }
      case Step::Kind::Copy:
        s.src = r.ref();
        s.dst = r.ref();
        s.bytes = r.u64();
        break;
      default:
        r.fail("unknown step kind " +
               std::to_string(static_cast<uint32_t>(s.kind)));
      }
    }
    break;
  case kWeights:
    a.weights.assign(data, size);
    return true;
  default:
    error = "unknown section kind " + std::to_string(kind);
    return false;
  }
  if (r.ok() && !r.atEnd())
    r.fail("trailing bytes");
  error = r.error;
  return r.ok();
}

} // namespace

std::string serializeArtifact(const Artifact &artifact) {
  const uint32_t kinds[] = {kMeta,    kBuffers, kSignature, kModules,
                            kKernels, kSteps,   kWeights};
  const uint32_t count = sizeof(kinds) / sizeof(kinds[0]);
  std::vector<std::string> sections;
  for (uint32_t kind : kinds)
    sections.push_back(encodeSection(artifact, kind));

  Writer table;
  uint64_t offset = kHeaderSize + count * kSectionEntry;
  std::string payload;
  for (uint32_t i = 0; i < count; ++i) {
    // Sections start on the alignment boundary (weights are mapped as is).
    uint64_t aligned = (offset + kAlignment - 1) / kAlignment * kAlignment;
    payload.append(aligned - offset, '\0');
    table.u32(kinds[i]);
    table.u32(0);
    table.u64(aligned);
    table.u64(sections[i].size());
    payload += sections[i];
    offset = aligned + sections[i].size();
  }
  std::string body = table.out + payload;
  Writer header;
  header.out.append(kMagic, sizeof(kMagic));
  header.u32(kFormatVersion);
  header.u32(count);
  header.u64(kHeaderSize + body.size());
  header.u64(fnv1a(body.data(), body.size()));
  return header.out + body;
}

void resealArtifact(std::string &bytes) {
  if (bytes.size() < kHeaderSize)
    return;
  uint64_t size = bytes.size();
  uint64_t hash = fnv1a(bytes.data() + kHeaderSize, size - kHeaderSize);
  std::memcpy(&bytes[16], &size, 8);
  std::memcpy(&bytes[24], &hash, 8);
}

bool parseArtifact(const std::string &bytes, Artifact &artifact,
                   std::string &error) {
  artifact = Artifact();
  if (bytes.size() < kHeaderSize ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    error = "not an amp GPU artifact (bad magic)";
    return false;
  }
  Reader header(bytes.data() + 8, kHeaderSize - 8, "header");
  uint32_t version = header.u32(), count = header.u32();
  uint64_t size = header.u64(), hash = header.u64();
  if (version != kFormatVersion) {
    error = "format version " + std::to_string(version) +
            ", but this runtime reads version " +
            std::to_string(kFormatVersion) + "; recompile the model";
    return false;
  }
  if (size != bytes.size()) {
    error = "the file is " + std::to_string(bytes.size()) +
            " bytes but its header says " + std::to_string(size) +
            (size > bytes.size() ? " (truncated)" : "");
    return false;
  }
  if (fnv1a(bytes.data() + kHeaderSize, size - kHeaderSize) != hash) {
    error = "checksum mismatch: the file is corrupted";
    return false;
  }
  if (count > 64 || kHeaderSize + count * kSectionEntry > size) {
    error = "bad section table";
    return false;
  }
  Reader table(bytes.data() + kHeaderSize, count * kSectionEntry,
               "section table");
  uint32_t seen = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t kind = table.u32();
    table.u32();
    uint64_t offset = table.u64(), length = table.u64();
    if (offset > size || length > size - offset) {
      error = "section " + std::to_string(kind) + " lies outside the file";
      return false;
    }
    if (kind < 32 && (seen & (1u << kind))) {
      error = "section " + std::to_string(kind) + " appears twice";
      return false;
    }
    if (kind < 32)
      seen |= 1u << kind;
    if (!decodeSection(bytes.data() + offset, length, kind, artifact, error))
      return false;
  }
  for (uint32_t kind = kMeta; kind <= kWeights; ++kind)
    if (!(seen & (1u << kind))) {
      error = "section " + std::to_string(kind) + " is missing";
      return false;
    }
  return validateArtifact(artifact, error);
}

bool readArtifact(const std::string &path, Artifact &artifact,
                  std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "'" + path + "': cannot open";
    return false;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (!parseArtifact(bytes, artifact, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

bool writeArtifact(const std::string &path, const Artifact &artifact,
                   std::string &error) {
  for (const Module &module : artifact.modules)
    if (module.format == ModuleFormat::Host) {
      error = "'" + path + "': an emulation's host kernels cannot be written";
      return false;
    }
  std::string bytes = serializeArtifact(artifact);
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out.write(bytes.data(), bytes.size()) || !out.flush()) {
      std::remove(temporary.c_str());
      error = "'" + path + "': cannot write";
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    error = "'" + path + "': cannot write";
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

namespace {

struct Checker {
  const Artifact &a;
  std::string &error;

  bool fail(const std::string &why) {
    error = why;
    return false;
  }
  /// `bytes` bytes at `ref` lie inside its buffer.
  bool inside(const BufferRef &ref, uint64_t bytes, const std::string &what) {
    if (ref.buffer >= a.buffers.size())
      return fail(what + ": buffer " + std::to_string(ref.buffer) +
                  " does not exist");
    const Buffer &b = a.buffers[ref.buffer];
    if (ref.byteOffset > b.size || bytes > b.size - ref.byteOffset)
      return fail(what + ": " + std::to_string(bytes) + " bytes at offset " +
                  std::to_string(ref.byteOffset) + " run past buffer " +
                  std::to_string(ref.buffer) + " ('" + b.name + "', " +
                  std::to_string(b.size) + " bytes)");
    return true;
  }
  bool matrix(const BufferRef &ref, DType type, int64_t batch, int64_t rows,
              int64_t cols, int64_t ld, int64_t stride,
              const std::string &what) {
    if (dtypeSize(type) == 0)
      return fail(what + ": unknown element type");
    if (rows < 0 || cols < 0 || batch < 1 || ld < cols || stride < 0)
      return fail(what + ": bad matrix layout");
    int64_t extent = viewExtentBytes(0, {batch, rows, cols}, {stride, ld, 1},
                                     dtypeSize(type));
    if (extent < 0)
      return fail(what + ": matrix extent overflows");
    return inside(ref, static_cast<uint64_t>(extent), what);
  }
  bool signature(const std::vector<TensorSignature> &list, const char *kind) {
    for (const TensorSignature &t : list) {
      std::string what = std::string(kind) + " '" + t.name + "'";
      if (dtypeSize(t.dtype) == 0)
        return fail(what + ": unknown element type");
      for (int64_t d : t.shape)
        if (d < 0)
          return fail(what + ": negative dimension");
      if (!inside(t.ref, t.byteSize(), what))
        return false;
    }
    return true;
  }

  bool run() {
    for (size_t i = 0; i < a.buffers.size(); ++i) {
      const Buffer &b = a.buffers[i];
      if (b.kind == BufferKind::Random) {
        if (b.dtype != DType::F32 && b.dtype != DType::F16 &&
            b.dtype != DType::BF16)
          return fail("buffer " + std::to_string(i) +
                      ": random weights must be f32, f16 or bf16");
        if (b.size % dtypeSize(b.dtype) || !(b.scale >= 0))
          return fail("buffer " + std::to_string(i) + ": bad random weight");
        continue;
      }
      uint64_t limit =
          b.kind == BufferKind::Arena ? a.arenaSize : a.weights.size();
      if (b.kind != BufferKind::Arena && b.kind != BufferKind::Weight)
        return fail("buffer " + std::to_string(i) + ": unknown kind");
      if (b.offset % kAlignment)
        return fail("buffer " + std::to_string(i) + ": misaligned");
      if (b.offset > limit || b.size > limit - b.offset)
        return fail("buffer " + std::to_string(i) + " ('" + b.name +
                    "') lies outside the " +
                    (b.kind == BufferKind::Arena ? "arena" : "weights"));
    }
    if (!signature(a.inputs, "input") || !signature(a.outputs, "output"))
      return false;
    for (size_t i = 0; i < a.modules.size(); ++i)
      if (a.modules[i].format != ModuleFormat::Cubin &&
          a.modules[i].format != ModuleFormat::Ptx &&
          a.modules[i].format != ModuleFormat::Host)
        return fail("module " + std::to_string(i) + ": unknown format");
    for (const Kernel &k : a.kernels) {
      if (k.modules.empty())
        return fail("kernel '" + k.name + "' has no module");
      for (uint32_t m : k.modules)
        if (m >= a.modules.size())
          return fail("kernel '" + k.name + "': module " + std::to_string(m) +
                      " does not exist");
    }
    for (size_t i = 0; i < a.steps.size(); ++i) {
      const Step &s = a.steps[i];
      std::string what = "step " + std::to_string(i) + " (" + s.name + ")";
      switch (s.kind) {
      case Step::Kind::Kernel:
        if (s.kernel >= a.kernels.size())
          return fail(what + ": kernel " + std::to_string(s.kernel) +
                      " does not exist");
        for (int d = 0; d < 3; ++d)
          if (s.grid[d] == 0 || s.block[d] == 0)
            return fail(what + ": empty launch");
        if (uint64_t(s.block[0]) * s.block[1] * s.block[2] > 1024)
          return fail(what + ": more than 1024 threads per block");
        for (size_t j = 0; j < s.args.size(); ++j) {
          const KernelArg &arg = s.args[j];
          if (arg.kind != KernelArg::Kind::MemRef)
            continue;
          std::string argWhat = what + " operand " + std::to_string(j);
          if (dtypeSize(arg.dtype) == 0)
            return fail(argWhat + ": unknown element type");
          int64_t extent = viewExtentBytes(arg.offset, arg.sizes, arg.strides,
                                           dtypeSize(arg.dtype));
          if (extent < 0)
            return fail(argWhat + ": bad view");
          if (!inside(arg.ref, static_cast<uint64_t>(extent), argWhat))
            return false;
        }
        break;
      case Step::Kind::Gemm: {
        const Gemm &g = s.gemm;
        if (g.m < 0 || g.n < 0 || g.k < 0)
          return fail(what + ": negative GEMM size");
        int64_t ar = g.transA ? g.k : g.m, ac = g.transA ? g.m : g.k;
        int64_t br = g.transB ? g.n : g.k, bc = g.transB ? g.k : g.n;
        if (!matrix(g.a, g.aType, g.batch, ar, ac, g.lda, g.strideA,
                    what + " A") ||
            !matrix(g.b, g.bType, g.batch, br, bc, g.ldb, g.strideB,
                    what + " B") ||
            !matrix(g.c, g.cType, g.batch, g.m, g.n, g.ldc, g.strideC,
                    what + " C"))
          return false;
        break;
      }
      case Step::Kind::Copy:
        if (!inside(s.src, s.bytes, what + " source") ||
            !inside(s.dst, s.bytes, what + " destination"))
          return false;
        if (a.buffers[s.dst.buffer].kind != BufferKind::Arena)
          return fail(what + ": writes a weight");
        break;
      }
    }
    return true;
  }
};

} // namespace

bool validateArtifact(const Artifact &artifact, std::string &error) {
  return Checker{artifact, error}.run();
}

//===----------------------------------------------------------------------===//
// Listing
//===----------------------------------------------------------------------===//

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string refString(const BufferRef &ref) {
  std::string s = "%" + std::to_string(ref.buffer);
  if (ref.byteOffset)
    s += "+" + std::to_string(ref.byteOffset);
  return s;
}

} // namespace

std::string describeArtifact(const Artifact &a) {
  std::ostringstream os;
  os << "amp GPU artifact v" << kFormatVersion << " (" << a.producer << ")\n";
  if (!a.source.empty())
    os << "source: " << a.source << "\n";
  uint64_t weights = 0, random = 0, unshared = 0;
  size_t weightCount = 0, randomCount = 0;
  for (const Buffer &b : a.buffers) {
    if (b.kind == BufferKind::Arena)
      unshared += (b.size + kAlignment - 1) / kAlignment * kAlignment;
    if (b.kind == BufferKind::Weight) {
      weights += b.size;
      ++weightCount;
    } else if (b.kind == BufferKind::Random) {
      random += b.size;
      ++randomCount;
    }
  }
  os << "arena: " << a.arenaSize << " bytes in "
     << a.buffers.size() - weightCount - randomCount << " buffers (" << unshared
     << " without reuse); weights: " << weights << " bytes in " << weightCount
     << " buffers\n";
  if (randomCount)
    os << "random weights (generated when loaded): " << random << " bytes in "
       << randomCount << " buffers\n";
  for (const TensorSignature &t : a.inputs)
    os << "input '" << t.name << "': " << dtypeName(t.dtype)
       << shapeString(t.shape) << " at " << refString(t.ref) << "\n";
  for (const TensorSignature &t : a.outputs)
    os << "output '" << t.name << "': " << dtypeName(t.dtype)
       << shapeString(t.shape) << " at " << refString(t.ref) << "\n";
  for (const Module &m : a.modules)
    os << "module "
       << (m.format == ModuleFormat::Cubin ? "cubin"
           : m.format == ModuleFormat::Ptx ? "ptx"
                                           : "host")
       << " " << m.arch << ": " << m.bytes.size() << " bytes\n";
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const Step &s = a.steps[i];
    os << "step " << i << ": ";
    switch (s.kind) {
    case Step::Kind::Kernel: {
      os << "kernel " << a.kernels[s.kernel].name << " grid(" << s.grid[0]
         << "," << s.grid[1] << "," << s.grid[2] << ") block(" << s.block[0]
         << "," << s.block[1] << "," << s.block[2] << ") args(";
      for (size_t j = 0; j < s.args.size(); ++j) {
        const KernelArg &arg = s.args[j];
        os << (j ? ", " : "");
        if (arg.kind == KernelArg::Kind::MemRef)
          os << refString(arg.ref) << ":" << dtypeName(arg.dtype)
             << shapeString(arg.sizes);
        else
          os << "scalar";
      }
      os << ")";
      break;
    }
    case Step::Kind::Gemm: {
      const Gemm &g = s.gemm;
      os << "gemm " << dtypeName(g.aType) << "x" << dtypeName(g.bType) << "->"
         << dtypeName(g.cType) << " batch=" << g.batch << " m=" << g.m
         << " n=" << g.n << " k=" << g.k << " transA=" << g.transA
         << " transB=" << g.transB << " beta=" << g.beta
         << " A=" << refString(g.a) << " B=" << refString(g.b)
         << " C=" << refString(g.c);
      break;
    }
    case Step::Kind::Copy:
      os << "copy " << s.bytes << " bytes " << refString(s.src) << " -> "
         << refString(s.dst);
      break;
    }
    os << "  // " << s.name << "\n";
  }
  return os.str();
}

} // namespace amp_gpu

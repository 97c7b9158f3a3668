//===- CpuRuntime.cpp - oneDNN-backed GEMM and convolution ----------------===//
//
// The CPU counterpart of the CUDA path's cuBLASLt calls: fp32 GEMMs go to
// dnnl_sgemm, convolutions to oneDNN convolution primitives (created once
// per shape and cached). If oneDNN refuses a case, a plain loop nest
// computes it, so a call never fails.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/CpuRuntime.h"
#include "amp/Runtime/FloatConversion.h"

#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

/// AMP_CPU_PROFILE=1: time spent in the runtime calls, printed at exit.
struct Profile {
  bool enabled = getenv("AMP_CPU_PROFILE") != nullptr;
  double matmulMs = 0, convMs = 0;
  long matmulCalls = 0, convCalls = 0;
  ~Profile() {
    if (enabled)
      fprintf(stderr,
              "amp-cpu-runtime: %ld matmul calls %.1f ms, %ld conv calls "
              "%.1f ms\n",
              matmulCalls, matmulMs, convCalls, convMs);
  }
  static Profile &get() {
    static Profile profile;
    return profile;
  }
};

/// Adds the lifetime of a scope to a profile counter.
struct ProfileScope {
  double *total = nullptr;
  std::chrono::steady_clock::time_point start;
  ProfileScope(double &counter, long &calls) {
    if (!Profile::get().enabled)
      return;
    total = &counter;
    ++calls;
    start = std::chrono::steady_clock::now();
  }
  ~ProfileScope() {
    if (total)
      *total += std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  }
};

/// A strided view of an fp32 memref descriptor.
struct View {
  float *data;
  std::vector<int64_t> sizes, strides;

  View(int64_t rank, void *descriptor) {
    auto *words = static_cast<int64_t *>(descriptor);
    auto *aligned = reinterpret_cast<float *>(words[1]);
    data = aligned + words[2];
    sizes.assign(words + 3, words + 3 + rank);
    strides.assign(words + 3 + rank, words + 3 + 2 * rank);
  }
  View(float *data, std::vector<int64_t> sizes, std::vector<int64_t> strides)
      : data(data), sizes(std::move(sizes)), strides(std::move(strides)) {}
  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
};

/// Row-major leading dimension and transpose flag for a 2-D view, if BLAS
/// can read it as is.
bool blasLayout(int64_t rowStride, int64_t colStride, int64_t rows,
                int64_t cols, char &trans, int64_t &ld) {
  if (colStride == 1 || cols == 1) {
    trans = 'N';
    ld = std::max<int64_t>(rowStride, std::max<int64_t>(cols, 1));
    return rows == 1 || rowStride >= cols;
  }
  if (rowStride == 1 || rows == 1) {
    trans = 'T';
    ld = std::max<int64_t>(colStride, std::max<int64_t>(rows, 1));
    return cols == 1 || colStride >= rows;
  }
  return false;
}

void naiveMatmul(const float *a, int64_t am, int64_t ak, const float *b,
                 int64_t bk, int64_t bn, float *c, int64_t cm, int64_t cn,
                 int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = c[i * cm + j * cn];
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * am + p * ak] * b[p * bk + j * bn];
      c[i * cm + j * cn] = sum;
    }
}

} // namespace

extern "C" void amp_cpu_matmul_f32(int64_t rankA, void *aDesc, int64_t rankB,
                                   void *bDesc, int64_t rankC, void *cDesc,
                                   int64_t transposeB) {
  Profile &profile = Profile::get();
  ProfileScope scope(profile.matmulMs, profile.matmulCalls);
  View a(rankA, aDesc), b(rankB, bDesc), c(rankC, cDesc);
  bool batched = rankC == 3;
  int64_t o = batched ? 1 : 0;
  int64_t batch = batched ? c.sizes[0] : 1;
  int64_t m = c.sizes[o], n = c.sizes[o + 1], k = a.sizes[o + 1];
  // B as a [K, N] view.
  int64_t bRow = b.strides[o], bCol = b.strides[o + 1];
  if (transposeB)
    std::swap(bRow, bCol);
  for (int64_t i = 0; i < batch; ++i) {
    const float *ap = a.data + (batched ? i * a.strides[0] : 0);
    const float *bp = b.data + (batched ? i * b.strides[0] : 0);
    float *cp = c.data + (batched ? i * c.strides[0] : 0);
    char ta, tb;
    int64_t lda, ldb;
    bool ok = c.strides[o + 1] == 1 &&
              c.strides[o] >= std::max<int64_t>(n, 1) &&
              blasLayout(a.strides[o], a.strides[o + 1], m, k, ta, lda) &&
              blasLayout(bRow, bCol, k, n, tb, ldb);
    if (ok && m > 0 && n > 0 && k > 0 &&
        dnnl_sgemm(ta, tb, m, n, k, 1.0f, ap, lda, bp, ldb, 1.0f, cp,
                   c.strides[o]) == dnnl_success)
      continue;
    naiveMatmul(ap, a.strides[o], a.strides[o + 1], bp, bRow, bCol, cp,
                c.strides[o], c.strides[o + 1], m, n, k);
  }
}

namespace {

struct ConvKey {
  std::vector<int64_t> words;
  bool operator<(const ConvKey &other) const { return words < other.words; }
};

/// A convolution primitive for one shape. When oneDNN prefers blocked
/// layouts (format_tag_any), the plain buffers are reordered into scratch
/// buffers around the call; constant weights are reordered once and cached.
struct ConvPrimitive {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_desc_t src, weights, dst;                // plain (strided)
  dnnl_memory_desc_t blockedSrc, blockedWeights, blockedDst, bias;
  bool reorderSrc = false, reorderWeights = false, reorderDst = false;
  dnnl_primitive_t srcIn = nullptr, weightsIn = nullptr, dstIn = nullptr,
                   dstOut = nullptr;
  std::vector<float> srcScratch, dstScratch;
  /// Reordered constant weights by (owner, address): see WeightCacheOwner.
  std::map<std::pair<const void *, const void *>, std::vector<float>>
      weightCache;
  std::vector<float> weightScratch;
};

dnnl_primitive_t makeReorder(dnnl_engine_t engine, const dnnl_memory_desc_t &from,
                             const dnnl_memory_desc_t &to) {
  dnnl_primitive_desc_t pd;
  if (dnnl_reorder_primitive_desc_create(&pd, &from, engine, &to, engine,
                                         nullptr) != dnnl_success)
    return nullptr;
  dnnl_primitive_t reorder = nullptr;
  if (dnnl_primitive_create(&reorder, pd) != dnnl_success)
    reorder = nullptr;
  dnnl_primitive_desc_destroy(pd);
  return reorder;
}

bool runReorder(dnnl_engine_t engine, dnnl_stream_t stream,
                dnnl_primitive_t reorder, const dnnl_memory_desc_t &fromMd,
                const void *from, const dnnl_memory_desc_t &toMd, void *to) {
  dnnl_memory_t src, dst;
  dnnl_memory_create(&src, &fromMd, engine, const_cast<void *>(from));
  dnnl_memory_create(&dst, &toMd, engine, to);
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
  dnnl_status_t status = dnnl_primitive_execute(reorder, stream, 2, args);
  dnnl_stream_wait(stream);
  dnnl_memory_destroy(src);
  dnnl_memory_destroy(dst);
  return status == dnnl_success;
}

size_t floatsOf(const dnnl_memory_desc_t &md) {
  return (dnnl_memory_desc_get_size(&md) + sizeof(float) - 1) / sizeof(float);
}

/// The compiled function running on this thread (WeightCacheOwner).
thread_local const void *currentWeightOwner = nullptr;
/// Where the failed checks of the code running on this thread go.
thread_local mlir::amp::RuntimeCheckFailure *currentChecks = nullptr;
/// Parallel loop bodies may fail checks on several threads at once.
std::mutex checkMutex;

struct Engine {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  std::mutex mutex;
  std::map<ConvKey, ConvPrimitive> convs;

  Engine() {
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) !=
            dnnl_success)
      engine = nullptr;
  }
  // The cache lives as long as the process; at exit its oneDNN handles are
  // released (LeakSanitizer reported every cached primitive otherwise).
  ~Engine() {
    for (auto &entry : convs) {
      ConvPrimitive &conv = entry.second;
      for (dnnl_primitive_t primitive :
           {conv.primitive, conv.srcIn, conv.weightsIn, conv.dstIn, conv.dstOut})
        if (primitive)
          dnnl_primitive_destroy(primitive);
    }
    if (stream)
      dnnl_stream_destroy(stream);
    if (engine)
      dnnl_engine_destroy(engine);
  }
  static Engine &get() {
    static Engine instance;
    return instance;
  }
};

/// Merges dims [g, c] of a grouped view into one channel dim.
bool mergeGroups(const View &v, std::vector<int64_t> &dims,
                 std::vector<int64_t> &strides) {
  dims = {v.sizes[0], v.sizes[1] * v.sizes[2]};
  strides = {v.strides[0], v.strides[2]};
  if (v.sizes[1] > 1 && v.strides[1] != v.sizes[2] * v.strides[2])
    return false;
  for (int64_t i = 3; i < v.rank(); ++i) {
    dims.push_back(v.sizes[i]);
    strides.push_back(v.strides[i]);
  }
  return true;
}

void naiveConv(const View &x, const View &w, const View &y, bool grouped,
               int64_t spatial, const int64_t *stride, const int64_t *dil,
               const int64_t *padBegin) {
  // Iterate in the grouped index space (g = 1 when not grouped).
  int64_t G = grouped ? x.sizes[1] : 1;
  int64_t s0 = grouped ? 3 : 2; // first spatial dim
  int64_t C = grouped ? x.sizes[2] : x.sizes[1];
  int64_t F = grouped ? w.sizes[1] : w.sizes[0];
  int64_t N = x.sizes[0];
  std::vector<int64_t> out(spatial), ker(spatial);
  int64_t outCount = 1, kerCount = 1;
  for (int64_t i = 0; i < spatial; ++i) {
    out[i] = y.sizes[s0 + i];
    ker[i] = w.sizes[(grouped ? 3 : 2) + i];
    outCount *= out[i];
    kerCount *= ker[i];
  }
  std::vector<int64_t> o(spatial), kk(spatial);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g)
      for (int64_t f = 0; f < F; ++f)
        for (int64_t oi = 0; oi < outCount; ++oi) {
          for (int64_t i = spatial - 1, r = oi; i >= 0; --i) {
            o[i] = r % out[i];
            r /= out[i];
          }
          float *yp = y.data + n * y.strides[0] +
                      (grouped ? g * y.strides[1] + f * y.strides[2]
                               : f * y.strides[1]);
          for (int64_t i = 0; i < spatial; ++i)
            yp += o[i] * y.strides[s0 + i];
          float sum = *yp;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t ki = 0; ki < kerCount; ++ki) {
              for (int64_t i = spatial - 1, r = ki; i >= 0; --i) {
                kk[i] = r % ker[i];
                r /= ker[i];
              }
              const float *xp = x.data + n * x.strides[0] +
                                (grouped ? g * x.strides[1] + c * x.strides[2]
                                         : c * x.strides[1]);
              const float *wp = w.data + (grouped ? g * w.strides[0] +
                                                        f * w.strides[1] +
                                                        c * w.strides[2]
                                                  : f * w.strides[0] +
                                                        c * w.strides[1]);
              int64_t ws0 = grouped ? 3 : 2;
              bool inside = true;
              for (int64_t i = 0; i < spatial; ++i) {
                int64_t at = o[i] * stride[i] + kk[i] * dil[i] - padBegin[i];
                inside &= at >= 0 && at < x.sizes[s0 + i];
                xp += at * x.strides[s0 + i];
                wp += kk[i] * w.strides[ws0 + i];
              }
              if (inside)
                sum += *xp * *wp;
            }
          *yp = sum;
        }
}

/// Calls `fn(element, index)` for every element of a strided view.
template <typename Fn>
void forEachElement(const View &v, Fn fn) {
  std::vector<int64_t> index(v.rank(), 0);
  int64_t count = 1;
  for (int64_t size : v.sizes)
    count *= size;
  for (int64_t i = 0; i < count; ++i) {
    int64_t linear = 0;
    for (int64_t d = 0; d < v.rank(); ++d)
      linear += index[d] * v.strides[d];
    fn(v.data[linear], index);
    for (int64_t d = v.rank() - 1; d >= 0; --d) {
      if (++index[d] < v.sizes[d])
        break;
      index[d] = 0;
    }
  }
}

bool initDesc(dnnl_memory_desc_t *md, const std::vector<int64_t> &dims,
              const std::vector<int64_t> &strides) {
  dnnl_dims_t d, s;
  for (size_t i = 0; i < dims.size(); ++i) {
    d[i] = dims[i];
    s[i] = strides[i];
  }
  return dnnl_memory_desc_init_by_strides(md, static_cast<int>(dims.size()),
                                          d, dnnl_f32, s) == dnnl_success;
}

ConvPrimitive *getConv(Engine &engine, const std::vector<int64_t> &srcDims,
                       const std::vector<int64_t> &srcStrides,
                       const std::vector<int64_t> &weiDims,
                       const std::vector<int64_t> &weiStrides,
                       const std::vector<int64_t> &dstDims,
                       const std::vector<int64_t> &dstStrides,
                       int64_t spatial, const int64_t *stride,
                       const int64_t *dil, const int64_t *padBegin,
                       const int64_t *padEnd, int64_t mode, bool relu,
                       bool blockedActivations) {
  ConvKey key;
  for (const auto *list : {&srcDims, &srcStrides, &weiDims, &weiStrides,
                           &dstDims, &dstStrides}) {
    key.words.push_back(static_cast<int64_t>(list->size()));
    key.words.insert(key.words.end(), list->begin(), list->end());
  }
  key.words.insert(key.words.end(), stride, stride + spatial);
  key.words.insert(key.words.end(), dil, dil + spatial);
  key.words.insert(key.words.end(), padBegin, padBegin + spatial);
  key.words.insert(key.words.end(), padEnd, padEnd + spatial);
  key.words.push_back(mode);
  key.words.push_back(relu);
  key.words.push_back(blockedActivations);
  auto it = engine.convs.find(key);
  if (it != engine.convs.end())
    return it->second.primitive ? &it->second : nullptr;
  ConvPrimitive &conv = engine.convs[key];
  dnnl_convolution_desc_t desc;
  dnnl_dims_t strides, dilates, paddingL, paddingR;
  for (int64_t i = 0; i < spatial; ++i) {
    strides[i] = stride[i];
    dilates[i] = dil[i] - 1; // oneDNN counts the gaps
    paddingL[i] = padBegin[i];
    paddingR[i] = padEnd[i];
  }
  // mode 1: the output is bias + conv; a [F] bias descriptor.
  dnnl_memory_desc_t biasMd;
  dnnl_dims_t biasDims = {dstDims[1]};
  if (dnnl_memory_desc_init_by_tag(&biasMd, 1, biasDims, dnnl_f32,
                                   dnnl_a) != dnnl_success)
    return nullptr;
  conv.bias = biasMd;
  if (!initDesc(&conv.src, srcDims, srcStrides) ||
      !initDesc(&conv.weights, weiDims, weiStrides) ||
      !initDesc(&conv.dst, dstDims, dstStrides))
    return nullptr;
  // Layouts: activations in oneDNN's channel-blocked layout (nChw16c with
  // AVX-512, nChw8c with AVX2) where `blockedActivations` asks for it and
  // the tensor has at least one block of channels, weights as oneDNN
  // chooses. The blocked layout runs the direct kernels, and its reorders
  // from and to the plain layout are cheap; with every layout left to
  // oneDNN it picks NHWC kernels whose reorders cost more than they save
  // (ResNet-18 training: 7.8 -> 7.4 s of convolution calls over 16 steps;
  // ResNet-50 inference 56 -> 52 ms, MobileNet V2 14.3 -> 10.8 ms; see
  // docs/CpuBackend.md). If no kernel takes the blocked layouts, oneDNN
  // chooses all of them. AMP_CPU_PLAIN_CONV=1 keeps the plain layouts.
  static const bool plainOnly = getenv("AMP_CPU_PLAIN_CONV") != nullptr;
  auto descOf = [](const std::vector<int64_t> &dims, dnnl_format_tag_t tag,
                   dnnl_memory_desc_t &md) {
    dnnl_dims_t d;
    for (size_t i = 0; i < dims.size(); ++i)
      d[i] = dims[i];
    return dnnl_memory_desc_init_by_tag(&md, static_cast<int>(dims.size()), d,
                                        dnnl_f32, tag) == dnnl_success;
  };
  auto blockedTag = [](const std::vector<int64_t> &dims) {
    static const int64_t block = [] {
      dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
      if ((isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core)
        return 16;
      if ((isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2)
        return 8;
      return 0;
    }();
    if (block == 0 || dims.size() < 3 || dims[1] < block)
      return dnnl_format_tag_any;
    bool wide = block == 16;
    switch (dims.size()) {
    case 3:
      return wide ? dnnl_aBc16b : dnnl_aBc8b;
    case 4:
      return wide ? dnnl_aBcd16b : dnnl_aBcd8b;
    case 5:
      return wide ? dnnl_aBcde16b : dnnl_aBcde8b;
    default:
      return dnnl_format_tag_any;
    }
  };
  // mode 0: dst += conv (a sum post-op); then an optional ReLU.
  auto createPrimitiveDesc = [&](dnnl_format_tag_t srcTag,
                                 dnnl_format_tag_t dstTag,
                                 dnnl_primitive_desc_t &pd) {
    dnnl_memory_desc_t srcMd = conv.src, weightsMd = conv.weights,
                       dstMd = conv.dst;
    if (!plainOnly && (!descOf(srcDims, srcTag, srcMd) ||
                       !descOf(weiDims, dnnl_format_tag_any, weightsMd) ||
                       !descOf(dstDims, dstTag, dstMd)))
      return false;
    if (dnnl_dilated_convolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_convolution_direct, &srcMd,
            &weightsMd, mode == 1 ? &biasMd : nullptr, &dstMd, strides,
            dilates, paddingL, paddingR) != dnnl_success)
      return false;
    dnnl_post_ops_t postOps;
    dnnl_primitive_attr_t attr;
    dnnl_post_ops_create(&postOps);
    if (mode == 0)
      dnnl_post_ops_append_sum(postOps, 1.0f);
    if (relu)
      dnnl_post_ops_append_eltwise(postOps, 1.0f, dnnl_eltwise_relu, 0.0f,
                                   0.0f);
    dnnl_primitive_attr_create(&attr);
    dnnl_primitive_attr_set_post_ops(attr, postOps);
    dnnl_status_t status =
        dnnl_primitive_desc_create(&pd, &desc, attr, engine.engine, nullptr);
    dnnl_post_ops_destroy(postOps);
    dnnl_primitive_attr_destroy(attr);
    return status == dnnl_success;
  };
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_format_tag_t srcTag = blockedActivations ? blockedTag(srcDims)
                                                : dnnl_format_tag_any,
                    dstTag = blockedActivations ? blockedTag(dstDims)
                                                : dnnl_format_tag_any;
  bool created = createPrimitiveDesc(srcTag, dstTag, pd);
  if (!created && !plainOnly &&
      (srcTag != dnnl_format_tag_any || dstTag != dnnl_format_tag_any))
    created = createPrimitiveDesc(dnnl_format_tag_any, dnnl_format_tag_any, pd);
  if (!created)
    return nullptr;
  conv.blockedSrc = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  conv.blockedWeights =
      *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  conv.blockedDst = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  dnnl_status_t status = dnnl_primitive_create(&conv.primitive, pd);
  dnnl_primitive_desc_destroy(pd);
  if (status != dnnl_success) {
    conv.primitive = nullptr;
    return nullptr;
  }
  conv.reorderSrc = !dnnl_memory_desc_equal(&conv.src, &conv.blockedSrc);
  conv.reorderWeights =
      !dnnl_memory_desc_equal(&conv.weights, &conv.blockedWeights);
  conv.reorderDst = !dnnl_memory_desc_equal(&conv.dst, &conv.blockedDst);
  bool ok = true;
  if (conv.reorderSrc) {
    conv.srcIn = makeReorder(engine.engine, conv.src, conv.blockedSrc);
    conv.srcScratch.resize(floatsOf(conv.blockedSrc));
    ok &= conv.srcIn != nullptr;
  }
  if (conv.reorderWeights) {
    conv.weightsIn =
        makeReorder(engine.engine, conv.weights, conv.blockedWeights);
    ok &= conv.weightsIn != nullptr;
  }
  if (conv.reorderDst) {
    if (mode == 0)
      conv.dstIn = makeReorder(engine.engine, conv.dst, conv.blockedDst);
    conv.dstOut = makeReorder(engine.engine, conv.blockedDst, conv.dst);
    conv.dstScratch.resize(floatsOf(conv.blockedDst));
    ok &= (mode != 0 || conv.dstIn) && conv.dstOut;
  }
  if (!ok) {
    conv.primitive = nullptr;
    return nullptr;
  }
  return &conv;
}

} // namespace

namespace {

/// The convolution of amp_cpu_conv_f32 on views (see CpuRuntime.h for the
/// forms and modes): oneDNN where it takes the case, else the reference
/// loops. Deterministic: each output element is summed by one thread in a
/// fixed order, whatever the thread count. `blockedActivations` asks for
/// oneDNN's channel-blocked layouts (see getConv); the weight gradient's
/// convolution, whose channels are the batch, leaves them to oneDNN (its
/// NHWC kernels measured faster there).
void runConv(const View &x, const View &w, const View &y, const View &b,
             int64_t spatial, const int64_t *stride, const int64_t *dil,
             const int64_t *padBegin, const int64_t *padEnd, int64_t mode,
             int64_t relu, int64_t constantWeights, bool blockedActivations) {
  // Grouped views have a group dimension: X (N, G, C/G, spatial...).
  bool grouped = x.rank() == spatial + 3;
  for (int64_t v : y.sizes)
    if (v == 0)
      return;
  // The bias must be F contiguous floats.
  if (mode == 1 && (b.rank() < 1 || b.strides[0] != 1))
    mode = 3; // unusual bias layout: initialise Y here, then accumulate
  bool emptyInput = false;
  for (int64_t v : x.sizes)
    emptyInput |= v == 0;
  Engine &engine = Engine::get();
  // AMP_CPU_NAIVE_CONV=1: the reference loops instead of oneDNN (to tell a
  // library problem from a lowering one).
  static const bool naiveOnly = getenv("AMP_CPU_NAIVE_CONV") != nullptr;
  // AMP_CPU_CHECK_CONV=1: every oneDNN convolution is also computed by the
  // reference loops and a mismatch is reported on stderr with its shapes.
  static const bool check = getenv("AMP_CPU_CHECK_CONV") != nullptr;
  std::vector<float> reference;
  std::vector<int64_t> denseStrides(y.rank(), 1);
  if (check && engine.engine && !naiveOnly) {
    for (int64_t i = y.rank() - 2; i >= 0; --i)
      denseStrides[i] = denseStrides[i + 1] * y.sizes[i + 1];
    reference.resize(y.rank() ? denseStrides[0] * y.sizes[0] : 1);
    View ref(reference.data(), y.sizes, denseStrides);
    forEachElement(y, [&](float &value, const std::vector<int64_t> &index) {
      int64_t at = 0;
      for (size_t d = 0; d < index.size(); ++d)
        at += index[d] * denseStrides[d];
      int64_t channel = grouped ? index[1] * y.sizes[2] + index[2] : index[1];
      reference[at] = mode == 1 || mode == 3 ? b.data[channel * b.strides[0]]
                      : mode == 0            ? value
                                             : 0.0f;
    });
    if (!emptyInput)
      naiveConv(x, w, ref, grouped, spatial, stride, dil, padBegin);
    if (relu)
      for (float &value : reference)
        value = value < 0 ? 0 : value;
  }
  auto compare = [&] {
    if (reference.empty())
      return;
    double diff = 0, norm = 0;
    forEachElement(y, [&](float &value, const std::vector<int64_t> &index) {
      int64_t at = 0;
      for (size_t d = 0; d < index.size(); ++d)
        at += index[d] * denseStrides[d];
      diff += (double(value) - reference[at]) * (double(value) - reference[at]);
      norm += double(reference[at]) * reference[at];
    });
    double rel = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    if (rel > 1e-5) {
      std::fprintf(stderr, "amp_cpu_conv_f32: oneDNN differs from the "
                   "reference loops by %.2e: x", rel);
      for (size_t i = 0; i < x.sizes.size(); ++i)
        std::fprintf(stderr, "%s%lld/%lld", i ? "," : "[",
                     (long long)x.sizes[i], (long long)x.strides[i]);
      std::fprintf(stderr, "] w");
      for (size_t i = 0; i < w.sizes.size(); ++i)
        std::fprintf(stderr, "%s%lld/%lld", i ? "," : "[",
                     (long long)w.sizes[i], (long long)w.strides[i]);
      std::fprintf(stderr, "] y");
      for (size_t i = 0; i < y.sizes.size(); ++i)
        std::fprintf(stderr, "%s%lld/%lld", i ? "," : "[",
                     (long long)y.sizes[i], (long long)y.strides[i]);
      std::fprintf(stderr, "] stride %lld dil %lld pad %lld..%lld mode %lld\n",
                   (long long)stride[0], (long long)dil[0],
                   (long long)padBegin[0], (long long)padEnd[0],
                   (long long)mode);
    }
  };
  if (engine.engine && !naiveOnly) {
    std::vector<int64_t> srcDims, srcStrides, dstDims, dstStrides;
    bool ok = true;
    if (grouped) {
      ok = mergeGroups(x, srcDims, srcStrides) &&
           mergeGroups(y, dstDims, dstStrides);
    } else {
      srcDims = x.sizes;
      srcStrides = x.strides;
      dstDims = y.sizes;
      dstStrides = y.strides;
    }
    if (ok) {
      std::lock_guard<std::mutex> lock(engine.mutex);
      ConvPrimitive *conv =
          emptyInput || mode == 3
              ? nullptr
              : getConv(engine, srcDims, srcStrides, w.sizes, w.strides,
                        dstDims, dstStrides, spatial, stride, dil, padBegin,
                        padEnd, mode, relu != 0, blockedActivations);
      if (conv) {
        dnnl_engine_t e = engine.engine;
        dnnl_stream_t st = engine.stream;
        bool ok = true;
        const void *srcData = x.data;
        if (conv->reorderSrc) {
          ok &= runReorder(e, st, conv->srcIn, conv->src, x.data,
                           conv->blockedSrc, conv->srcScratch.data());
          srcData = conv->srcScratch.data();
        }
        const void *weiData = w.data;
        if (conv->reorderWeights) {
          std::vector<float> *reordered = &conv->weightScratch;
          bool cached = false;
          if (constantWeights && currentWeightOwner) {
            auto key = std::make_pair(currentWeightOwner,
                                      static_cast<const void *>(w.data));
            auto found = conv->weightCache.find(key);
            cached = found != conv->weightCache.end();
            reordered = &conv->weightCache[key];
          }
          if (!cached) {
            reordered->resize(floatsOf(conv->blockedWeights));
            ok &= runReorder(e, st, conv->weightsIn, conv->weights, w.data,
                             conv->blockedWeights, reordered->data());
          }
          weiData = reordered->data();
        }
        void *dstData = y.data;
        if (conv->reorderDst) {
          if (mode == 0)
            ok &= runReorder(e, st, conv->dstIn, conv->dst, y.data,
                             conv->blockedDst, conv->dstScratch.data());
          dstData = conv->dstScratch.data();
        }
        dnnl_memory_t src, wei, dst, bias = nullptr;
        dnnl_memory_create(&src, &conv->blockedSrc, e,
                           const_cast<void *>(srcData));
        dnnl_memory_create(&wei, &conv->blockedWeights, e,
                           const_cast<void *>(weiData));
        dnnl_memory_create(&dst, &conv->blockedDst, e, dstData);
        dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src},
                                   {DNNL_ARG_WEIGHTS, wei},
                                   {DNNL_ARG_DST, dst},
                                   {DNNL_ARG_BIAS, nullptr}};
        int nargs = 3;
        if (mode == 1) {
          dnnl_memory_create(&bias, &conv->bias, e, b.data);
          args[3].memory = bias;
          nargs = 4;
        }
        ok &= dnnl_primitive_execute(conv->primitive, st, nargs, args) ==
              dnnl_success;
        dnnl_stream_wait(st);
        dnnl_memory_destroy(src);
        dnnl_memory_destroy(wei);
        dnnl_memory_destroy(dst);
        if (bias)
          dnnl_memory_destroy(bias);
        if (ok && conv->reorderDst)
          ok &= runReorder(e, st, conv->dstOut, conv->blockedDst,
                           conv->dstScratch.data(), conv->dst, y.data);
        if (ok) {
          compare();
          return;
        }
      }
    }
  }
  // Fallback: initialise Y per mode, accumulate, apply the ReLU.
  if (mode != 0)
    forEachElement(y, [&](float &value, const std::vector<int64_t> &index) {
      // channel = (group, filter) or filter
      int64_t channel = grouped ? index[1] * y.sizes[2] + index[2] : index[1];
      value = mode == 1 || mode == 3 ? b.data[channel * b.strides[0]] : 0.0f;
    });
  if (!emptyInput)
    naiveConv(x, w, y, grouped, spatial, stride, dil, padBegin);
  if (relu)
    forEachElement(y, [](float &value, const std::vector<int64_t> &) {
      if (value < 0)
        value = 0;
    });
}

} // namespace

extern "C" void amp_cpu_conv_f32(
    int64_t rankX, void *xDesc, int64_t rankW, void *wDesc, int64_t rankY,
    void *yDesc, int64_t rankB, void *bDesc, int64_t stride0, int64_t stride1,
    int64_t stride2, int64_t dilation0, int64_t dilation1, int64_t dilation2,
    int64_t spatial, int64_t constantWeights, int64_t padBegin0,
    int64_t padBegin1, int64_t padBegin2, int64_t padEnd0, int64_t padEnd1,
    int64_t padEnd2, int64_t mode, int64_t relu) {
  Profile &profile = Profile::get();
  ProfileScope scope(profile.convMs, profile.convCalls);
  View x(rankX, xDesc), w(rankW, wDesc), y(rankY, yDesc), b(rankB, bDesc);
  int64_t stride[3] = {stride0, stride1, stride2};
  int64_t dil[3] = {dilation0, dilation1, dilation2};
  int64_t padBegin[3] = {padBegin0, padBegin1, padBegin2};
  int64_t padEnd[3] = {padEnd0, padEnd1, padEnd2};
  runConv(x, w, y, b, spatial, stride, dil, padBegin, padEnd, mode, relu,
          constantWeights, /*blockedActivations=*/true);
}

extern "C" void amp_cpu_conv_weight_grad_f32(
    int64_t rankX, void *xDesc, int64_t rankDY, void *dyDesc, int64_t rankDW,
    void *dwDesc, int64_t stride0, int64_t stride1, int64_t stride2,
    int64_t dilation0, int64_t dilation1, int64_t dilation2, int64_t spatial,
    int64_t padBegin0, int64_t padBegin1, int64_t padBegin2, int64_t padEnd0,
    int64_t padEnd1, int64_t padEnd2, int64_t accumulate) {
  Profile &profile = Profile::get();
  ProfileScope scope(profile.convMs, profile.convCalls);
  View x(rankX, xDesc), dy(rankDY, dyDesc), dw(rankDW, dwDesc);
  (void)padEnd0;
  (void)padEnd1;
  (void)padEnd2;
  // dW[m, c, k] = sum_{n, o} dY[n, m, o] Xpad[n, c, o * stride + k * dil]
  // is a forward convolution with the roles swapped: batch c, channels n,
  // kernel dY[:, m] (the output size), output k, strides = the dilations
  // and dilations = the strides. It runs on the forward path on transposed
  // views (no copies without groups): oneDNN's forward kernels split the
  // outputs between threads, so the result does not depend on the thread
  // count, unlike its backward-weights kernels, which reduce per-thread
  // partial sums.
  bool grouped = rankX == spatial + 3;
  int64_t s0 = grouped ? 3 : 2; // first spatial dim of X, dY and dW
  int64_t padBeginT[3] = {0, 0, 0}, padEndT[3] = {0, 0, 0};
  int64_t strideT[3] = {1, 1, 1}, dilT[3] = {1, 1, 1};
  int64_t stride[3] = {stride0, stride1, stride2};
  int64_t dil[3] = {dilation0, dilation1, dilation2};
  int64_t padBegin[3] = {padBegin0, padBegin1, padBegin2};
  std::vector<int64_t> inSizes(spatial);
  for (int64_t i = 0; i < spatial; ++i) {
    strideT[i] = dil[i];
    dilT[i] = stride[i];
    padBeginT[i] = padBegin[i];
    // Exactly kernel outputs: pad the end, or crop X where the forward
    // convolution never read its last rows.
    int64_t kernel = dw.sizes[s0 + i], out = dy.sizes[s0 + i];
    int64_t in = x.sizes[s0 + i];
    int64_t end = (kernel - 1) * dil[i] + (out - 1) * stride[i] + 1 - in -
                  padBegin[i];
    padEndT[i] = std::max<int64_t>(end, 0);
    inSizes[i] = std::min(in, in + end);
  }
  int64_t mode = accumulate ? 0 : 2;
  View none(nullptr, {}, {});
  if (!grouped) {
    // X^T (C, N, in...), dY^T (M, N, out...), dW^T (C, M, kernel...).
    std::vector<int64_t> xSizes = {x.sizes[1], x.sizes[0]},
                         xStrides = {x.strides[1], x.strides[0]};
    std::vector<int64_t> gSizes = {dy.sizes[1], dy.sizes[0]},
                         gStrides = {dy.strides[1], dy.strides[0]};
    std::vector<int64_t> wSizes = {dw.sizes[1], dw.sizes[0]},
                         wStrides = {dw.strides[1], dw.strides[0]};
    for (int64_t i = 0; i < spatial; ++i) {
      xSizes.push_back(inSizes[i]);
      xStrides.push_back(x.strides[2 + i]);
      gSizes.push_back(dy.sizes[2 + i]);
      gStrides.push_back(dy.strides[2 + i]);
      wSizes.push_back(dw.sizes[2 + i]);
      wStrides.push_back(dw.strides[2 + i]);
    }
    runConv(View(x.data, xSizes, xStrides), View(dy.data, gSizes, gStrides),
            View(dw.data, wSizes, wStrides), none, spatial, strideT, dilT,
            padBeginT, padEndT, mode, 0, 0, /*blockedActivations=*/false);
    return;
  }
  // Grouped: X (N, G, C/G, in...) as a dense (C/G, G, N, in...) copy (the
  // convolution merges (G, N) into its channels), dY (N, G, M/G, out...)
  // as grouped weights (G, M/G, N, out...), dW (G, M/G, C/G, kernel...) as
  // the grouped output (C/G, G, M/G, kernel...).
  int64_t n = x.sizes[0], g = x.sizes[1], c = x.sizes[2];
  std::vector<int64_t> tSizes = {c, g, n}, tStrides(3 + spatial, 1);
  for (int64_t i = 0; i < spatial; ++i)
    tSizes.push_back(inSizes[i]);
  for (int64_t i = 3 + spatial - 2; i >= 0; --i)
    tStrides[i] = tStrides[i + 1] * tSizes[i + 1];
  std::vector<float> transposed(tSizes.empty() ? 0
                                               : tStrides[0] * tSizes[0]);
  View t(transposed.data(), tSizes, tStrides);
  {
    std::vector<int64_t> srcSizes = {c, g, n}, srcStrides = {
        x.strides[2], x.strides[1], x.strides[0]};
    for (int64_t i = 0; i < spatial; ++i) {
      srcSizes.push_back(inSizes[i]);
      srcStrides.push_back(x.strides[3 + i]);
    }
    View src(x.data, srcSizes, srcStrides);
    forEachElement(t, [&](float &value, const std::vector<int64_t> &index) {
      int64_t at = 0;
      for (size_t d = 0; d < index.size(); ++d)
        at += index[d] * src.strides[d];
      value = src.data[at];
    });
  }
  std::vector<int64_t> gSizes = {dy.sizes[1], dy.sizes[2], dy.sizes[0]},
                       gStrides = {dy.strides[1], dy.strides[2], dy.strides[0]};
  std::vector<int64_t> wSizes = {dw.sizes[2], dw.sizes[0], dw.sizes[1]},
                       wStrides = {dw.strides[2], dw.strides[0], dw.strides[1]};
  for (int64_t i = 0; i < spatial; ++i) {
    gSizes.push_back(dy.sizes[3 + i]);
    gStrides.push_back(dy.strides[3 + i]);
    wSizes.push_back(dw.sizes[3 + i]);
    wStrides.push_back(dw.strides[3 + i]);
  }
  runConv(t, View(dy.data, gSizes, gStrides), View(dw.data, wSizes, wStrides),
          none, spatial, strideT, dilT, padBeginT, padEndT, mode, 0, 0,
          /*blockedActivations=*/false);
}

extern "C" void amp_cpu_parallel_for(void (*body)(int64_t, int64_t, void *),
                                     void *context, int64_t count,
                                     int64_t workPerIteration,
                                     int64_t minWork) {
  if (count <= 0)
    return;
  // AMP_CPU_MIN_PARALLEL_WORK=N overrides the compiled threshold (tuning).
  static const int64_t minWorkOverride = [] {
    const char *value = getenv("AMP_CPU_MIN_PARALLEL_WORK");
    return value ? std::atoll(value) : int64_t(-1);
  }();
  if (minWorkOverride >= 0)
    minWork = minWorkOverride;
  int64_t work = workPerIteration > 0 &&
                         count > std::numeric_limits<int64_t>::max() /
                                     workPerIteration
                     ? std::numeric_limits<int64_t>::max()
                     : count * std::max<int64_t>(workPerIteration, 1);
  int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads <= 1 || count < 2 || work < minWork) {
    body(0, count, context);
    return;
  }
  int64_t teams = std::min<int64_t>(threads, count);
  mlir::amp::RuntimeCheckFailure *checks = currentChecks;
#pragma omp parallel num_threads(teams)
  {
    mlir::amp::RuntimeCheckScope scope(checks);
    int64_t team = omp_get_thread_num(), size = omp_get_num_threads();
    // Balanced contiguous ranges: the first count % size get one more.
    int64_t begin = count / size * team + std::min<int64_t>(team, count % size);
    int64_t end = begin + count / size + (team < count % size ? 1 : 0);
    if (begin < end)
      body(begin, end, context);
  }
}

/// A run-time check failed (RuntimeChecks.h): the first failure of the
/// running call is kept; the lowered op goes on with clamped indices.
extern "C" void amp_cpu_check_failed(int64_t id, int64_t value, int64_t bound) {
  mlir::amp::RuntimeCheckFailure *checks = currentChecks;
  if (!checks)
    return;
  std::lock_guard<std::mutex> lock(checkMutex);
  if (checks->failed)
    return;
  checks->failed = true;
  checks->id = id;
  checks->value = value;
  checks->bound = bound;
}

/// compiler-rt's float -> bfloat16 truncation, which LLVM's x86 backend
/// calls where it promotes bf16 vector code (a select of <2 x bfloat> the
/// SLP vectorizer formed) and which the JIT's process does not have. The
/// bf16 result is returned in the low 16 bits of the float return register
/// (xmm0 / s0), where the caller reads a bfloat.
extern "C" float amp_cpu_truncsfbf2(float value) {
  uint32_t bits = amp_runtime::floatToBFloat16Bits(value);
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

namespace mlir::amp {
WeightCacheOwner::WeightCacheOwner(const void *owner)
    : previous(currentWeightOwner) {
  currentWeightOwner = owner;
}

WeightCacheOwner::~WeightCacheOwner() { currentWeightOwner = previous; }

RuntimeCheckScope::RuntimeCheckScope(RuntimeCheckFailure *failure)
    : previous(currentChecks) {
  currentChecks = failure;
}

RuntimeCheckScope::~RuntimeCheckScope() { currentChecks = previous; }

void releaseCachedWeights(const void *owner) {
  Engine &engine = Engine::get();
  std::lock_guard<std::mutex> lock(engine.mutex);
  for (auto &entry : engine.convs) {
    auto &cache = entry.second.weightCache;
    for (auto it = cache.begin(); it != cache.end();)
      it = it->first.first == owner ? cache.erase(it) : std::next(it);
  }
}

const RuntimeSymbol *getCpuRuntimeSymbols(unsigned &count) {
  static const RuntimeSymbol symbols[] = {
      {"amp_cpu_matmul_f32", reinterpret_cast<void *>(&amp_cpu_matmul_f32)},
      {"amp_cpu_conv_f32", reinterpret_cast<void *>(&amp_cpu_conv_f32)},
      {"amp_cpu_conv_weight_grad_f32",
       reinterpret_cast<void *>(&amp_cpu_conv_weight_grad_f32)},
      {"amp_cpu_parallel_for", reinterpret_cast<void *>(&amp_cpu_parallel_for)},
      {"__truncsfbf2", reinterpret_cast<void *>(&amp_cpu_truncsfbf2)},
      {"amp_cpu_check_failed", reinterpret_cast<void *>(&amp_cpu_check_failed)},
  };
  count = sizeof(symbols) / sizeof(symbols[0]);
  return symbols;
}
} // namespace mlir::amp

//===- Collective.cpp - NCCL communicators for data-parallel steps --------===//
//
// NCCL is loaded at run time (dlopen), so the runtime neither needs it to
// load nor to run a single process: $AMP_NCCL_LIBRARY if set, else
// libnccl.so.2 from the loader's path, else the library found when the
// runtime was built (AMP_NCCL_DEFAULT_LIBRARY: the nvidia-nccl wheel's).
// The declarations come from that wheel's nccl.h; a build without the
// header keeps the entry points, which then say how to get NCCL.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"
#include "amp_gpu/Artifact.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#ifdef AMP_GPU_HAVE_NCCL
#include <dlfcn.h>
#include <nccl.h>
#endif

using namespace amp_gpu;
using namespace amp_gpu::detail;

#ifdef AMP_GPU_HAVE_NCCL

namespace {

/// NCCL's entry points, resolved once.
struct NcclApi {
  decltype(&ncclGetVersion) getVersion = nullptr;
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommDestroy) commDestroy = nullptr;
  decltype(&ncclCommAbort) commAbort = nullptr;
  decltype(&ncclCommGetAsyncError) commGetAsyncError = nullptr;
  decltype(&ncclAllReduce) allReduce = nullptr;
  decltype(&ncclGroupStart) groupStart = nullptr;
  decltype(&ncclGroupEnd) groupEnd = nullptr;
  decltype(&ncclGetErrorString) getErrorString = nullptr;
  std::string path, error;
};

template <typename F>
bool resolve(void *handle, const char *symbol, F &function,
             std::string &error) {
  function = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!function)
    error = std::string("NCCL library has no '") + symbol + "'";
  return function != nullptr;
}

const NcclApi &getNccl() {
  static const NcclApi api = [] {
    NcclApi result;
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("AMP_NCCL_LIBRARY"); env && *env)
      candidates.push_back(env);
    else {
      candidates.push_back("libnccl.so.2");
#ifdef AMP_NCCL_DEFAULT_LIBRARY
      candidates.push_back(AMP_NCCL_DEFAULT_LIBRARY);
#endif
    }
    void *handle = nullptr;
    std::string tried;
    for (const std::string &candidate : candidates) {
      handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) {
        result.path = candidate;
        break;
      }
      const char *why = dlerror();
      tried += "\n  " + candidate + ": " + (why ? why : "not found");
    }
    if (!handle) {
      result.error = "cannot load NCCL (set AMP_NCCL_LIBRARY to "
                     "libnccl.so.2, or pip install nvidia-nccl-cu13):" +
                     tried;
      return result;
    }
    std::string &e = result.error;
    if (!resolve(handle, "ncclGetVersion", result.getVersion, e) ||
        !resolve(handle, "ncclGetUniqueId", result.getUniqueId, e) ||
        !resolve(handle, "ncclCommInitRank", result.commInitRank, e) ||
        !resolve(handle, "ncclCommDestroy", result.commDestroy, e) ||
        !resolve(handle, "ncclCommAbort", result.commAbort, e) ||
        !resolve(handle, "ncclCommGetAsyncError", result.commGetAsyncError,
                 e) ||
        !resolve(handle, "ncclAllReduce", result.allReduce, e) ||
        !resolve(handle, "ncclGroupStart", result.groupStart, e) ||
        !resolve(handle, "ncclGroupEnd", result.groupEnd, e) ||
        !resolve(handle, "ncclGetErrorString", result.getErrorString, e)) {
      e = "'" + result.path + "': " + e;
      return result;
    }
    int version = 0;
    // ncclAvg (the buffers' mean) needs NCCL 2.10.
    if (result.getVersion(&version) != ncclSuccess || version < 21000)
      e = "'" + result.path + "' is NCCL " + std::to_string(version) +
          "; amp needs NCCL 2.10 or later";
    return result;
  }();
  return api;
}

bool ncclOk(const NcclApi &api, ncclResult_t status, const std::string &what) {
  if (status == ncclSuccess)
    return true;
  lastError = what + ": NCCL error " + std::to_string(int(status)) + " (" +
              api.getErrorString(status) + ")";
  return false;
}

bool toNcclType(int dtype, ncclDataType_t &out) {
  switch (DType(dtype)) {
  case DType::F32:
    out = ncclFloat32;
    return true;
  case DType::F16:
    out = ncclFloat16;
    return true;
  case DType::BF16:
    out = ncclBfloat16;
    return true;
  case DType::F64:
    out = ncclFloat64;
    return true;
  case DType::I64:
    out = ncclInt64;
    return true;
  case DType::I32:
    out = ncclInt32;
    return true;
  case DType::I8:
    out = ncclInt8;
    return true;
  case DType::U8:
    out = ncclUint8;
    return true;
  case DType::U32:
    out = ncclUint32;
    return true;
  case DType::U64:
    out = ncclUint64;
    return true;
  default:
    return false;
  }
}

} // namespace

struct AmpCommunicator {
  AmpContext *context = nullptr;
  ncclComm_t comm = nullptr;
  int size = 1, rank = 0;
  bool aborted = false;
};

extern "C" {

AmpStatus ampCollectiveVersion(int *version) {
  if (!version)
    return fail("ampCollectiveVersion: null argument");
  const NcclApi &api = getNccl();
  if (!api.error.empty())
    return fail(api.error);
  return ncclOk(api, api.getVersion(version), "reading NCCL's version")
             ? AMP_OK
             : AMP_ERROR;
}

AmpStatus ampCollectiveUniqueId(unsigned char id[AMP_COLLECTIVE_ID_BYTES]) {
  static_assert(sizeof(ncclUniqueId) == AMP_COLLECTIVE_ID_BYTES,
                "NCCL's unique id changed size");
  if (!id)
    return fail("ampCollectiveUniqueId: null argument");
  const NcclApi &api = getNccl();
  if (!api.error.empty())
    return fail(api.error);
  ncclUniqueId unique;
  if (!ncclOk(api, api.getUniqueId(&unique), "making a communicator id"))
    return AMP_ERROR;
  std::memcpy(id, &unique, sizeof unique);
  return AMP_OK;
}

AmpStatus ampCreateCommunicator(AmpContext *context, int size, int rank,
                                const unsigned char id[AMP_COLLECTIVE_ID_BYTES],
                                AmpCommunicator **comm) {
  if (!context || !id || !comm)
    return fail("ampCreateCommunicator: null argument");
  *comm = nullptr;
  if (size < 1 || rank < 0 || rank >= size)
    return fail("ampCreateCommunicator: rank " + std::to_string(rank) + " of " +
                std::to_string(size));
  const NcclApi &api = getNccl();
  if (!api.error.empty())
    return fail(api.error);
  ncclUniqueId unique;
  std::memcpy(&unique, id, sizeof unique);
  auto result = std::make_unique<AmpCommunicator>();
  result->context = context;
  result->size = size;
  result->rank = rank;
  if (!cudaOk(cudaSetDevice(context->device), "selecting the device") ||
      !ncclOk(api, api.commInitRank(&result->comm, size, unique, rank),
              "joining the communicator as rank " + std::to_string(rank) +
                  " of " + std::to_string(size)))
    return AMP_ERROR;
  *comm = result.release();
  return AMP_OK;
}

void ampDestroyCommunicator(AmpCommunicator *comm) {
  if (!comm)
    return;
  if (comm->comm && !comm->aborted) // ncclCommAbort freed an aborted one
    getNccl().commDestroy(comm->comm);
  delete comm;
}

AmpStatus ampAllReduce(AmpCommunicator *comm, void *device, int dtype,
                       int numSegments, const uint64_t *counts,
                       const int *ops) {
  if (!comm || !device || numSegments < 0 || (numSegments && (!counts || !ops)))
    return fail("ampAllReduce: bad argument");
  if (comm->aborted)
    return fail("ampAllReduce: the communicator was aborted");
  const NcclApi &api = getNccl();
  ncclDataType_t type;
  if (!toNcclType(dtype, type))
    return fail("ampAllReduce: no NCCL type for dtype " +
                std::to_string(dtype));
  uint64_t elementBytes = dtypeSize(DType(dtype));
  if (!ncclOk(api, api.groupStart(), "starting an NCCL group"))
    return AMP_ERROR;
  char *cursor = static_cast<char *>(device);
  bool ok = true;
  for (int i = 0; i < numSegments && ok; ++i) {
    ncclRedOp_t op;
    switch (ops[i]) {
    case AMP_REDUCE_SUM:
      op = ncclSum;
      break;
    case AMP_REDUCE_AVG:
      op = ncclAvg;
      break;
    case AMP_REDUCE_MAX:
      op = ncclMax;
      break;
    default:
      fail("ampAllReduce: unknown reduction " + std::to_string(ops[i]));
      ok = false;
      continue;
    }
    if (counts[i])
      ok = ncclOk(api,
                  api.allReduce(cursor, cursor, counts[i], type, op, comm->comm,
                                comm->context->stream),
                  "all-reduce of " + std::to_string(counts[i]) + " elements");
    cursor += counts[i] * elementBytes;
  }
  std::string error = lastError;
  bool ended = ncclOk(api, api.groupEnd(), "ending an NCCL group");
  if (!ok)
    return fail(error);
  return ended ? AMP_OK : AMP_ERROR;
}

AmpStatus ampCommunicatorWait(AmpCommunicator *comm, double timeoutSeconds) {
  if (!comm)
    return fail("ampCommunicatorWait: null argument");
  const NcclApi &api = getNccl();
  auto start = std::chrono::steady_clock::now();
  auto abortWith = [&](const std::string &message) {
    api.commAbort(comm->comm);
    comm->aborted = true;
    return fail(message);
  };
  for (int spin = 0;; ++spin) {
    cudaError_t state = cudaStreamQuery(comm->context->stream);
    if (state == cudaSuccess)
      return AMP_OK;
    if (state != cudaErrorNotReady) {
      cudaOk(state, "running the step");
      return AMP_ERROR;
    }
    ncclResult_t async = ncclSuccess;
    if (api.commGetAsyncError(comm->comm, &async) == ncclSuccess &&
        async != ncclSuccess && async != ncclInProgress)
      return abortWith(std::string("the all-reduce failed (another rank "
                                   "died or its network failed): ") +
                       api.getErrorString(async));
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (timeoutSeconds > 0 && waited > timeoutSeconds)
      return abortWith("no progress for " + std::to_string(timeoutSeconds) +
                       " s in the all-reduce (another rank hung or died)");
    // Spin briefly (a step's tail), then poll every millisecond.
    if (spin > 1000)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

} // extern "C"

#else // !AMP_GPU_HAVE_NCCL

namespace {
const char *kNoNccl =
    "amp's CUDA runtime was built without NCCL's header (pip install "
    "nvidia-nccl-cu13, or set AMP_NCCL_INCLUDE_DIR, then rebuild it)";
} // namespace

struct AmpCommunicator {};

extern "C" {
AmpStatus ampCollectiveVersion(int *) { return fail(kNoNccl); }
AmpStatus ampCollectiveUniqueId(unsigned char *) { return fail(kNoNccl); }
AmpStatus ampCreateCommunicator(AmpContext *, int, int, const unsigned char *,
                                AmpCommunicator **comm) {
  if (comm)
    *comm = nullptr;
  return fail(kNoNccl);
}
void ampDestroyCommunicator(AmpCommunicator *) {}
AmpStatus ampAllReduce(AmpCommunicator *, void *, int, int, const uint64_t *,
                       const int *) {
  return fail(kNoNccl);
}
AmpStatus ampCommunicatorWait(AmpCommunicator *, double) {
  return fail(kNoNccl);
}
} // extern "C"

#endif // AMP_GPU_HAVE_NCCL

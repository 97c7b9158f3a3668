/*===- amp_gpu.h - C ABI of amp's CUDA runtime ------------------*- C -*-===//
 *
 * Loads a .ampgpu artifact (compiled by `amp-opt --amp-target=cuda`) and
 * runs it on one CUDA stream. Depends on the CUDA runtime and cuBLASLt only.
 * Every call returns AMP_OK or an error whose text ampGetLastError() gives
 * (per thread; it names the failing step and the CUDA/cuBLASLt status).
 *
 *===----------------------------------------------------------------------===*/

#ifndef AMP_GPU_H
#define AMP_GPU_H

#include <stddef.h>
#include <stdint.h>

#if defined(AMP_GPU_BUILDING_LIBRARY)
#define AMP_GPU_API __attribute__((visibility("default")))
#else
#define AMP_GPU_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum AmpStatus {
  AMP_OK = 0,
  AMP_ERROR = 1,     /* bad artifact, bad argument, failed CUDA call */
  AMP_NO_DEVICE = 2, /* no usable CUDA device or driver */
} AmpStatus;

typedef struct AmpContext AmpContext;
typedef struct AmpProgram AmpProgram;

/* The message of this thread's last failed call ("" if none). */
AMP_GPU_API const char *ampGetLastError(void);

/* A context on CUDA device `device`: a stream, a cuBLASLt handle and its
 * workspace. */
AMP_GPU_API AmpStatus ampCreateContext(int device, AmpContext **context);
AMP_GPU_API void ampDestroyContext(AmpContext *context);

/* Reads, validates and loads an artifact: device code, weights, arena. */
AMP_GPU_API AmpStatus ampLoad(AmpContext *context, const char *path,
                              AmpProgram **program);
AMP_GPU_API void ampUnload(AmpProgram *program);

/* The I/O signature. dtype codes are amp_gpu::DType (1 f32, 2 f16, 3 bf16,
 * 4 f64, 5 i64, 6 i32, 7 i16, 8 i8, 9-12 ui64..ui8, 13 bool). */
AMP_GPU_API int ampGetNumInputs(const AmpProgram *program);
AMP_GPU_API int ampGetNumOutputs(const AmpProgram *program);
AMP_GPU_API AmpStatus ampGetTensorInfo(const AmpProgram *program, int isOutput,
                                       int index, const char **name, int *dtype,
                                       int *rank, const int64_t **shape,
                                       uint64_t *bytes);

/* Copies input `index` from host memory (dense, row-major) to the device. */
AMP_GPU_API AmpStatus ampSetInput(AmpProgram *program, int index,
                                  const void *host);
/* Runs the schedule on the stream (asynchronously). With graph capture on,
 * the first call records a CUDA graph and later calls replay it. */
AMP_GPU_API AmpStatus ampExecute(AmpProgram *program);
/* Waits for the stream, then copies output `index` to host memory. */
AMP_GPU_API AmpStatus ampGetOutput(AmpProgram *program, int index, void *host);
/* Set inputs, execute, get outputs. */
AMP_GPU_API AmpStatus ampRun(AmpProgram *program, const void *const *inputs,
                             void *const *outputs);
AMP_GPU_API AmpStatus ampSetGraphCapture(AmpProgram *program, int enable);
AMP_GPU_API AmpStatus ampSynchronize(AmpProgram *program);
/* Device time of `iterations` executions after `warmup` ones, in ms per
 * execution (CUDA events on the stream). */
AMP_GPU_API AmpStatus ampBenchmark(AmpProgram *program, int warmup,
                                   int iterations, double *millisecondsPerRun);

/* Device memory, for drivers that move tensors between programs (a split
 * train step) without a trip through the host. Copies are asynchronous on
 * the context's stream, ordered with the programs' executions. */
AMP_GPU_API AmpStatus ampDeviceAlloc(AmpContext *context, uint64_t bytes,
                                     void **device);
AMP_GPU_API void ampDeviceFree(AmpContext *context, void *device);
/* The device address of input or output `index` (valid while loaded). */
AMP_GPU_API AmpStatus ampGetTensorAddress(AmpProgram *program, int isOutput,
                                          int index, void **device);
AMP_GPU_API AmpStatus ampCopyDevice(AmpContext *context, void *dst,
                                    const void *src, uint64_t bytes);
AMP_GPU_API AmpStatus ampDeviceZero(AmpContext *context, void *device,
                                    uint64_t bytes);
AMP_GPU_API AmpStatus ampCopyToHost(AmpContext *context, void *host,
                                    const void *device, uint64_t bytes);
AMP_GPU_API AmpStatus ampCopyToDevice(AmpContext *context, void *device,
                                      const void *host, uint64_t bytes);
AMP_GPU_API AmpStatus ampContextSynchronize(AmpContext *context);

/* Collectives between processes, one device each, through NCCL. NCCL is
 * loaded when first needed (dlopen): $AMP_NCCL_LIBRARY if set, else
 * libnccl.so.2 from the loader's path, else the library the runtime was
 * built against (the nvidia-nccl wheel's). Without NCCL these calls fail
 * with a message that says so; nothing else needs it. */
typedef struct AmpCommunicator AmpCommunicator;
typedef enum AmpReduceOp {
  AMP_REDUCE_SUM = 0,
  AMP_REDUCE_AVG = 1,
  AMP_REDUCE_MAX = 2,
} AmpReduceOp;
#define AMP_COLLECTIVE_ID_BYTES 128
/* NCCL's version (e.g. 22307 for 2.23.7); loads NCCL. */
AMP_GPU_API AmpStatus ampCollectiveVersion(int *version);
/* A new communicator's id: made by one rank, sent to the others (MPI). */
AMP_GPU_API AmpStatus
ampCollectiveUniqueId(unsigned char id[AMP_COLLECTIVE_ID_BYTES]);
/* Joins communicator `id` as `rank` of `size` on the context's device
 * (collective: every rank calls it). */
AMP_GPU_API AmpStatus ampCreateCommunicator(
    AmpContext *context, int size, int rank,
    const unsigned char id[AMP_COLLECTIVE_ID_BYTES], AmpCommunicator **comm);
/* Ends the communicator; after a failed wait it aborts pending work. */
AMP_GPU_API void ampDestroyCommunicator(AmpCommunicator *comm);
/* In-place all-reduce of consecutive segments of one device buffer of
 * `dtype` (amp_gpu::DType codes; f32, f16, bf16, f64, i64, i32, i8, u8),
 * segment i over counts[i] elements with ops[i], as one NCCL group (one
 * launch), asynchronously on the context's stream. */
AMP_GPU_API AmpStatus ampAllReduce(AmpCommunicator *comm, void *device,
                                   int dtype, int numSegments,
                                   const uint64_t *counts, const int *ops);
/* Waits for the context's stream while watching the communicator: an
 * asynchronous NCCL error (a peer died) or `timeoutSeconds` (> 0) without
 * completion aborts the communicator and fails, instead of hanging. */
AMP_GPU_API AmpStatus ampCommunicatorWait(AmpCommunicator *comm,
                                          double timeoutSeconds);

#ifdef __cplusplus
}
#endif

#endif /* AMP_GPU_H */

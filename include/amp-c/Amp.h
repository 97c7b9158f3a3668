/*===-- amp-c/Amp.h - amp's C API ---------------------------------*- C -*-===*\
|*                                                                            *|
|* amp for compilers in other languages, in MLIR's C-API style: the types are *|
|* MLIR's (MlirContext, MlirModule, MlirDialectRegistry, MlirLogicalResult,   *|
|* MlirStringRef), errors are MLIR diagnostics delivered to the handlers      *|
|* attached to the context (mlirContextAttachDiagnosticHandler), and strings  *|
|* the library produces come through MlirStringCallback. Guide:               *|
|* docs/Embedding.md, "The C API". Link AmpCAPI (Amp::CAPI).                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_C_AMP_H
#define AMP_C_AMP_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Registration
 *===----------------------------------------------------------------------===*/

/* The amp dialect alone: mlirGetDialectHandle__amp__(). */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Amp, amp);

/* Everything amp's programs and pipelines use: the amp dialect with its
 * gradient models, func, arith, math, linalg, tensor, bufferization, scf,
 * memref, LLVM and TOSA, and the precision models that let amp-autocast
 * decide linalg, TOSA, tensor, arith and math ops. */
MLIR_CAPI_EXPORTED void ampRegisterDialects(MlirDialectRegistry registry);

/* amp's passes and named pipelines (amp-autocast, amp-front-end{...}, ...)
 * in the global pass registry, for mlirParsePassPipeline. Idempotent. */
MLIR_CAPI_EXPORTED void ampRegisterPasses(void);

/*===----------------------------------------------------------------------===*
 * ONNX
 *===----------------------------------------------------------------------===*/

/* Imports the ONNX model at `path` into `context` (which must have
 * ampRegisterDialects' dialects). On error returns a null module
 * (mlirModuleIsNull) after emitting diagnostics that name the file, node
 * and op. */
MLIR_CAPI_EXPORTED MlirModule ampImportONNXFile(MlirContext context,
                                                MlirStringRef path);

/* The same for a serialized model in memory; `name` names it in messages
 * (and locates external data files). */
MLIR_CAPI_EXPORTED MlirModule ampImportONNXBuffer(MlirContext context,
                                                  MlirStringRef bytes,
                                                  MlirStringRef name);

/* Writes the module (one graph function) as ONNX at `path`; `opset` 0
 * keeps the imported model's. Nothing is written on failure. */
MLIR_CAPI_EXPORTED MlirLogicalResult ampExportONNXFile(MlirModule module,
                                                       MlirStringRef path,
                                                       int64_t opset);

/* The serialized model, passed to `callback` (possibly in several pieces). */
MLIR_CAPI_EXPORTED MlirLogicalResult
ampExportONNXBuffer(MlirModule module, int64_t opset,
                    MlirStringCallback callback, void *userData);

/*===----------------------------------------------------------------------===*
 * The front end: cleanup, amp-autocast, cast cleanup
 *===----------------------------------------------------------------------===*/

/* The options of amp-front-end, by the names its textual options use
 * (type, opt-level, allow, deny, policy, keep-io-types, ...: the same
 * declaration as amp-opt's flags and Python's keywords). */
typedef struct AmpFrontEndOptions {
  void *ptr;
} AmpFrontEndOptions;

/* New options with the defaults; errors of ampFrontEndOptionsSet are
 * emitted as diagnostics of `context`. */
MLIR_CAPI_EXPORTED AmpFrontEndOptions
ampFrontEndOptionsCreate(MlirContext context);

MLIR_CAPI_EXPORTED void ampFrontEndOptionsDestroy(AmpFrontEndOptions options);

/* Sets one option from its textual value ("bf16", "2", "true",
 * "Softmax,Exp"); an unknown name or a bad value is an error. */
MLIR_CAPI_EXPORTED MlirLogicalResult ampFrontEndOptionsSet(
    AmpFrontEndOptions options, MlirStringRef name, MlirStringRef value);

/* Runs the front end on `module`. If `reportCallback` is not null, it
 * receives the autocast report as JSON (one record per op and a summary,
 * the format of amp-opt --amp-report). */
MLIR_CAPI_EXPORTED MlirLogicalResult
ampRunFrontEnd(MlirModule module, AmpFrontEndOptions options,
               MlirStringCallback reportCallback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* AMP_C_AMP_H */

/*===- amp-capi-test.c - every function of amp-c/Amp.h, from C -----------===*\
|*                                                                            *|
|* Compiled as C (not C++). Usage: amp-capi-test MODEL.onnx OUT_DIR          *|
|* Prints one line per check for FileCheck (test/CAPI/capi.test); exits      *|
|* non-zero at the first check that fails.                                    *|
\*===----------------------------------------------------------------------===*/

#include "amp-c/Amp.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Diagnostics are collected into one buffer. */
static char diagnostics[8192];

static void appendText(MlirStringRef text, void *userData) {
  char *buffer = (char *)userData;
  size_t used = strlen(buffer);
  size_t room = sizeof(diagnostics) - used - 1;
  size_t n = text.length < room ? text.length : room;
  memcpy(buffer + used, text.data, n);
  buffer[used + n] = '\0';
}

static MlirLogicalResult onDiagnostic(MlirDiagnostic diagnostic,
                                      void *userData) {
  (void)userData;
  mlirDiagnosticPrint(diagnostic, appendText, diagnostics);
  appendText(mlirStringRefCreateFromCString("\n"), diagnostics);
  return mlirLogicalResultSuccess();
}

/* Growable byte buffer for the ONNX bytes and the report. */
typedef struct {
  char *data;
  size_t size;
} Bytes;

static void appendBytes(MlirStringRef piece, void *userData) {
  Bytes *bytes = (Bytes *)userData;
  bytes->data = (char *)realloc(bytes->data, bytes->size + piece.length + 1);
  memcpy(bytes->data + bytes->size, piece.data, piece.length);
  bytes->size += piece.length;
  bytes->data[bytes->size] = '\0';
}

#define CHECK(condition, what)                                                 \
  do {                                                                         \
    if (!(condition)) {                                                        \
      fprintf(stderr, "FAILED: %s\ndiagnostics:\n%s\n", what, diagnostics);    \
      return 1;                                                                \
    }                                                                          \
    printf("ok: %s\n", what);                                                  \
  } while (0)

static MlirStringRef str(const char *text) {
  return mlirStringRefCreateFromCString(text);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: amp-capi-test MODEL.onnx OUT_DIR\n");
    return 2;
  }
  char path[4096];

  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  ampRegisterDialects(registry);
  ampRegisterPasses();
  ampRegisterPasses(); /* idempotent */
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(context);
  mlirContextAttachDiagnosticHandler(context, onDiagnostic, NULL, NULL);

  MlirDialect amp = mlirDialectHandleLoadDialect(mlirGetDialectHandle__amp__(), context);
  CHECK(!mlirDialectIsNull(amp), "the amp dialect handle loads the dialect");
  MlirStringRef ns = mlirDialectGetNamespace(amp);
  CHECK(ns.length == 3 && strncmp(ns.data, "amp", 3) == 0, "its namespace is amp");

  /* Import errors come through the diagnostic handler. */
  MlirModule missing = ampImportONNXFile(context, str("/nonexistent/model.onnx"));
  CHECK(mlirModuleIsNull(missing), "a missing file gives a null module");
  CHECK(strstr(diagnostics, "/nonexistent/model.onnx") != NULL,
        "the diagnostic names the file");
  printf("diagnostic: %s", diagnostics);
  diagnostics[0] = '\0';
  MlirModule garbage = ampImportONNXBuffer(context, str("not a model"), str("garbage.onnx"));
  CHECK(mlirModuleIsNull(garbage) && strstr(diagnostics, "garbage.onnx") != NULL,
        "a corrupt buffer gives a null module and a diagnostic naming it");
  diagnostics[0] = '\0';

  MlirModule module = ampImportONNXFile(context, str(argv[1]));
  CHECK(!mlirModuleIsNull(module), "the model imports");

  /* Options by their textual names; errors are diagnostics. */
  AmpFrontEndOptions options = ampFrontEndOptionsCreate(context);
  CHECK(mlirLogicalResultIsFailure(ampFrontEndOptionsSet(options, str("type"), str("f8"))) ||
        mlirLogicalResultIsFailure(ampRunFrontEnd(module, options, NULL, NULL)),
        "type=f8 is refused");
  CHECK(strstr(diagnostics, "f8") != NULL, "the diagnostic names the bad value");
  printf("diagnostic: %s", diagnostics);
  diagnostics[0] = '\0';
  ampFrontEndOptionsDestroy(options);
  options = ampFrontEndOptionsCreate(context);
  CHECK(mlirLogicalResultIsFailure(ampFrontEndOptionsSet(options, str("no-such-option"), str("1"))),
        "an unknown option is refused");
  printf("diagnostic: %s", diagnostics);
  diagnostics[0] = '\0';
  CHECK(mlirLogicalResultIsSuccess(ampFrontEndOptionsSet(options, str("type"), str("bf16"))),
        "type=bf16");
  CHECK(mlirLogicalResultIsSuccess(ampFrontEndOptionsSet(options, str("deny"), str("Softmax,Exp"))),
        "deny=Softmax,Exp");
  CHECK(mlirLogicalResultIsSuccess(ampFrontEndOptionsSet(options, str("opt-level"), str("2"))),
        "opt-level=2");

  Bytes report = {NULL, 0};
  CHECK(mlirLogicalResultIsSuccess(ampRunFrontEnd(module, options, appendBytes, &report)),
        "the front end runs");
  ampFrontEndOptionsDestroy(options);
  CHECK(report.size > 0 && strstr(report.data, "\"summary\"") != NULL &&
            strstr(report.data, "\"type\": \"bf16\"") != NULL,
        "the report is JSON with a bf16 summary");
  CHECK(strstr(report.data, "deny option") != NULL, "the report records the deny option");

  /* The module is bf16 now. */
  Bytes text = {NULL, 0};
  mlirOperationPrint(mlirModuleGetOperation(module), appendBytes, &text);
  CHECK(strstr(text.data, "bf16") != NULL, "the module holds bf16 ops");

  /* bf16 convolutions need opset 22 in ONNX: at the model's opset 17 the
   * export fails with a diagnostic saying so. */
  Bytes onnx = {NULL, 0};
  CHECK(mlirLogicalResultIsFailure(ampExportONNXBuffer(module, 0, appendBytes, &onnx)) &&
            strstr(diagnostics, "opset 22") != NULL,
        "bf16 at opset 17 is refused, naming opset 22");
  diagnostics[0] = '\0';
  CHECK(mlirLogicalResultIsSuccess(ampExportONNXBuffer(module, 22, appendBytes, &onnx)) &&
            onnx.size > 100,
        "ONNX to a buffer");
  snprintf(path, sizeof(path), "%s/capi.onnx", argv[2]);
  CHECK(mlirLogicalResultIsSuccess(ampExportONNXFile(module, str(path), 22)), "ONNX to a file");
  FILE *file = fopen(path, "rb");
  CHECK(file != NULL, "the file exists");
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fclose(file);
  CHECK(size == (long)onnx.size, "file and buffer have the same size");

  /* The written model imports again. */
  MlirModule again = ampImportONNXBuffer(context, mlirStringRefCreate(onnx.data, onnx.size),
                                         str("capi.onnx"));
  CHECK(!mlirModuleIsNull(again), "the written model imports again");
  mlirModuleDestroy(again);

  /* An unwritable path: failure, a diagnostic, no file. */
  CHECK(mlirLogicalResultIsFailure(
            ampExportONNXFile(module, str("/nonexistent/dir/out.onnx"), 22)),
        "an unwritable path fails");
  CHECK(diagnostics[0] != '\0', "with a diagnostic");
  printf("diagnostic: %s", diagnostics);

  /* A registered pipeline by name (ampRegisterPasses). */
  diagnostics[0] = '\0';
  MlirModule second = ampImportONNXFile(context, str(argv[1]));
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  CHECK(mlirLogicalResultIsSuccess(mlirParsePassPipeline(
            opm, str("builtin.module(amp-front-end{type=bf16})"), appendText, diagnostics)),
        "amp-front-end{type=bf16} parses as a pipeline");
  CHECK(mlirLogicalResultIsSuccess(
            mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(second))),
        "and runs");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(second);

  free(report.data);
  free(text.data);
  free(onnx.data);
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  printf("all checks passed\n");
  return 0;
}

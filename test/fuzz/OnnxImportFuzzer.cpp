//===- OnnxImportFuzzer.cpp - libFuzzer targets over the ONNX importer ----===//
//
// One source, three targets (test/fuzz/CMakeLists.txt):
//   onnx-import     any bytes -> import + verifier + shape inference;
//   onnx-mutate     the same, mutating decoded models (dims, attributes,
//                   data types, edges, op types, opsets, nodes) so that
//                   inputs get past the protobuf parser;
//   onnx-roundtrip  mutated models -> import -> canonicalize + CSE ->
//                   amp-autocast (f16) -> amp-cast-cleanup -> ONNX writer
//                   -> re-import.
// The contract: a failure always emits an error (never a silent failure,
// crash, sanitizer report, hang or huge allocation); an imported module
// verifies; a module the passes accept and the writer writes imports again.
//
//===----------------------------------------------------------------------===//

#include "OnnxFuzzing.h"

#include "amp/Target/ONNX/ONNXExporter.h"
#include "amp/Target/ONNX/ONNXImporter.h"
#include "amp/Transforms/Passes.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

#if defined(AMP_FUZZ_MUTATE) || defined(AMP_FUZZ_ROUNDTRIP)
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  return amp_fuzz::mutateModel(data, size, maxSize, seed);
}
#endif

#ifdef AMP_FUZZ_ROUNDTRIP
static void roundTrip(amp_fuzz::FuzzContext &context, ModuleOp module) {
  PassManager pm(&context.get(), ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  amp::AmpAutocastOptions autocast;
  autocast.type = "f16";
  pm.addPass(amp::createAmpAutocast(autocast));
  pm.addPass(amp::createAmpCastCleanup());
  context.resetErrors();
  if (failed(pm.run(module))) {
    if (context.errors() == 0)
      std::abort();
    return;
  }
  if (failed(verify(module)))
    std::abort();
  // In memory: writing a file would register LLVM's remove-on-signal
  // handlers, which replace libFuzzer's (a later crash would then end the
  // process without a report or a saved input).
  context.resetErrors();
  std::string bytes;
  if (failed(amp::exportToONNXBuffer(module, bytes))) {
    if (context.errors() == 0)
      std::abort();
    return;
  }
  OwningOpRef<ModuleOp> again = amp_fuzz::importChecked(context, bytes);
  // What amp wrote, amp reads.
  if (!again || failed(verify(*again)))
    std::abort();
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: uniqued attributes and weight blobs of
  // earlier inputs do not accumulate.
  amp_fuzz::FuzzContext context;
  OwningOpRef<ModuleOp> module = amp_fuzz::importChecked(
      context, llvm::StringRef(reinterpret_cast<const char *>(data), size));
#ifdef AMP_FUZZ_ROUNDTRIP
  if (module)
    roundTrip(context, *module);
#endif
  return 0;
}

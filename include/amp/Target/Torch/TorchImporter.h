//===- TorchImporter.h - torch.export graphs into the amp dialect -*- C++ -*-===//
//
// A torch.export program, decomposed to the Core ATen operator set, comes
// in as JSON (written by amp_mlir.torch: each FX node's target, arguments,
// result dtypes and shapes with symbolic sizes by name, module path and
// source line) with its parameters, buffers and constants as named
// buffers. Each ATen op is translated into amp ops through their ODS
// builders (lib/Target/Torch/Aten*.cpp, one file per op family); shape
// inference checks every op as it is built.
//
// Weights become `dense_resource` constants named by their state-dict
// names, over the caller's memory where it is aligned (no copy): the
// caller's `owner` keeps it alive for as long as MLIR holds the blob.
// Nodes are named `<module path>/<node>` ("layer1.0.conv1/convolution_3")
// and located at the user's source line.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_TORCH_TORCHIMPORTER_H
#define AMP_TARGET_TORCH_TORCHIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::amp {

/// The value of one parameter, buffer or constant of the program.
struct TorchWeight {
  /// The state-dict name (the input spec's target).
  std::string name;
  /// Its bytes, C-contiguous, of the dtype and shape the graph declares.
  llvm::ArrayRef<char> bytes;
  /// Keeps `bytes` alive; released when MLIR drops the blob.
  std::shared_ptr<const void> owner;
};

struct TorchImportOptions {
  /// Mark the constants made from parameters and buffers with
  /// kInitializerAttrName, for the train-step builder (its parameters are
  /// the marked constants of floating-point type; see TrainStep.h).
  bool markInitializers = false;
  /// The graph is a training-mode export for the train step: BatchNorm in
  /// training mode and dropout are translated (else refused, with the
  /// advice to call module.eval()), and buffer mutations (the running
  /// statistics the train step updates itself) are not outputs.
  bool training = false;
};

/// Translates the graph; null after emitting diagnostics (the node, its
/// ATen op, module path and source line, and what is wrong).
OwningOpRef<ModuleOp> importTorchGraph(llvm::StringRef graphJson,
                                       llvm::ArrayRef<TorchWeight> weights,
                                       MLIRContext *context,
                                       const TorchImportOptions &options = {});

/// The ATen targets the importer translates ("aten.convolution.default"),
/// sorted, with the amp ops each becomes.
struct AtenOpInfo {
  llvm::StringRef target;
  llvm::StringRef ampOps;
};
std::vector<AtenOpInfo> getSupportedAtenOps();

} // namespace mlir::amp

#endif // AMP_TARGET_TORCH_TORCHIMPORTER_H

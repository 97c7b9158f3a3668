//===- ModelLimits.h - resource caps on models read from files --*- C++ -*-===//
//
// amp reads models from strangers. Every size that comes from a file is
// checked against what backs it before anything is allocated; on top of
// that, these caps bound what a model may make amp hold or compute at
// compile time, so that a small file cannot ask for terabytes, a million
// levels of nesting or hours of constant folding. Exceeding one is an error
// that names the cap, the value and the node. The defaults admit every
// public model amp knows of (the largest single tensors of today's open
// LLMs, an embedding of 256k x 8k floats, are 8 GiB) and are written here
// once; amp-opt and amp-run bind their --amp-max-* flags to this struct.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_ONNX_MODELLIMITS_H
#define AMP_TARGET_ONNX_MODELLIMITS_H

#include <cstdint>
#include <string>

namespace mlir::amp {

class OptionsBinder;

struct ModelLimits {
  /// The largest tensor, in elements: an initializer, a Constant, a tensor
  /// file, or the statically known result of any node (ConstantOfShape,
  /// Expand, Tile, Range, Resize, ...).
  int64_t maxTensorElements = int64_t(1) << 32;
  /// The largest tensor, in bytes of its element type.
  int64_t maxTensorBytes = int64_t(16) << 30;
  /// All initializers and Constant tensors of the model together, in bytes.
  int64_t maxInitializerBytes = int64_t(64) << 30;
  /// Nodes of the model, counting those inside subgraphs.
  int64_t maxNodes = 1000000;
  /// Levels of subgraphs inside subgraphs (an If in the main graph has
  /// depth 1; an If inside its then-branch depth 2).
  int64_t maxSubgraphDepth = 64;
  /// What amp-fold-constants may materialise at compile time, in bytes:
  /// the operands, intermediate values and results of everything it
  /// evaluates in one run. Ops beyond the budget are left for run time.
  int64_t maxFoldBytes = int64_t(64) << 20;

  /// The caps by name (max-tensor-elements, ...; the tools' flags are
  /// --amp-<name>), declared once for every front end.
  void bind(OptionsBinder &binder);
  /// "" if every cap is positive, else what is wrong ("max-nodes: 0 is
  /// not a positive integer").
  std::string validate() const;
};

} // namespace mlir::amp

#endif // AMP_TARGET_ONNX_MODELLIMITS_H

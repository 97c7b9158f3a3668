//===- AmpOps.h - amp dialect operations ------------------------*- C++ -*-===//
#ifndef AMP_DIALECT_AMP_IR_AMPOPS_H
#define AMP_DIALECT_AMP_IR_AMPOPS_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "amp/Dialect/Amp/IR/AmpPrecisionInterface.h"

#define GET_OP_CLASSES
#include "amp/Dialect/Amp/IR/AmpOps.h.inc"

namespace mlir::amp {

/// An amp op and the ONNX operator type it models.
struct OnnxOpName {
  llvm::StringRef onnxName;
  llvm::StringRef operationName;
};

/// Every amp op that models an ONNX operator, in ODS order.
llvm::ArrayRef<OnnxOpName> getOnnxOpNames();

/// The ONNX node name recorded in `loc` (the first NameLoc found, looking
/// through fused and call-site locations); empty if there is none.
llvm::StringRef getNodeName(Location loc);

/// The name of a constant: its NameLoc, else the key of its dense_resource
/// blob (the ONNX initializer name survives there when canonicalization
/// merges locations); empty if neither.
std::string getConstantName(ConstantOp constant);

/// Name of the discardable attribute that asks a low-precision op to
/// accumulate in fp32 (a TypeAttr holding f32).
constexpr llvm::StringLiteral kAccumulateAttrName = "amp.accumulate";
/// Why autocast chose an op's precision (string; `annotate` option).
constexpr llvm::StringLiteral kReasonAttrName = "amp.reason";
/// A number that identifies an op across copies of a module (integer; set
/// by tools that compare two compilations of one model, e.g. amp-run
/// --check-numerics).
constexpr llvm::StringLiteral kProbeAttrName = "amp.probe";

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_IR_AMPOPS_H

//===- AmpInterfaces.td - amp op interfaces ----------------*- tablegen -*-===//
//
// PrecisionOpInterface: what an op declares about mixed precision. The
// autocast pass reads it; it never hard-codes operand positions itself.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPINTERFACES_TD
#define AMP_DIALECT_AMP_IR_AMPINTERFACES_TD

include "mlir/IR/OpBase.td"

def Amp_PrecisionOpInterface : OpInterface<"PrecisionOpInterface"> {
  let cppNamespace = "::mlir::amp";
  let description = [{
    Declares how an op takes part in mixed precision. Each float operand is
    one of:
      * a precision operand: it carries data computed at the op's precision;
        when the op runs in fp16/bf16 the operand is converted with it;
      * a fixed-type operand (indices, shapes, Resize scales, the Pow
        exponent, the Dropout ratio, ...): never converted;
      * an any-type operand (the input of Shape or Cast): takes whatever
        float type it is given, so no cast is ever needed in front of it.
    Each float result either follows the op's precision or has a fixed type
    (LayerNormalization's statistics, Cast's output, ...).

    Ops that can compute with an fp32 accumulator while reading and writing
    fp16/bf16 tensors (GEMMs, convolutions, reductions, normalisations,
    softmax) say so; the autocast pass then marks them with the
    `amp.accumulate = f32` attribute, which backends honour.

    The fields are declared per op in ODS (`fixedTypeOperands`,
    `anyTypeOperands`, `fixedTypeResults`, `canAccumulateInF32` of
    `Amp_Op`).

    Ops of other dialects (linalg, TOSA, arith, math, tensor) implement the
    interface through external models (lib/Transforms/PrecisionModels). The
    last four methods are for them; amp's ops keep the defaults:
      * `buildCast`: the conversion op of the op's dialect (arith.truncf,
        tosa.cast, ...) that autocast puts in front of it;
      * `hasPayloadRegions`: its regions are a scalar payload (linalg), not
        nested graphs, so autocast may decide it;
      * `finishInPrecision`: after autocast has converted its precision
        operands and retyped its precision results, the op makes itself
        consistent again (a linalg payload's block arguments, a named op's
        generated body) and may return replacements for its results;
      * `estimateFlops`: the cost the autocast report weighs it with.
    A result the op keeps in fp32 while its inputs are low precision
    (`isPrecisionResult` false: the fp32 accumulator of a linalg or TOSA
    contraction) is the op's fp32 accumulation.
  }];
  let methods = [
    InterfaceMethod<
      "Returns the ONNX operator type this op models.",
      "::llvm::StringRef", "getOnnxOpType", (ins), [{}],
      [{ return ConcreteOp::getOnnxName(); }]>,
    InterfaceMethod<
      "Returns true if operand `index` follows the op's precision.",
      "bool", "isPrecisionOperand", (ins "unsigned":$index), [{}],
      [{ return !ConcreteOp::isFixedTypeOperandIndex(index) &&
                !ConcreteOp::isAnyTypeOperandIndex(index); }]>,
    InterfaceMethod<
      "Returns true if operand `index` accepts any float type unchanged.",
      "bool", "acceptsAnyFloatOperand", (ins "unsigned":$index), [{}],
      [{ return ConcreteOp::isAnyTypeOperandIndex(index); }]>,
    InterfaceMethod<
      "Returns true if result `index` follows the op's precision.",
      "bool", "isPrecisionResult", (ins "unsigned":$index), [{}],
      [{ return !ConcreteOp::isFixedTypeResultIndex(index); }]>,
    InterfaceMethod<
      "Returns true if the op can accumulate in fp32 with low-precision I/O.",
      "bool", "supportsF32Accumulation", (ins), [{}],
      [{ return ConcreteOp::kCanAccumulateInF32; }]>,
    InterfaceMethod<
      "Builds the conversion of `value` to element type `elementType` in the "
      "op's dialect; a null value: autocast uses amp.cast.",
      "::mlir::Value", "buildCast",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$value, "::mlir::Type":$elementType), [{}],
      [{ return {}; }]>,
    InterfaceMethod<
      "Returns true if the op's regions are a scalar payload that autocast "
      "may retype (ops with other regions are left alone).",
      "bool", "hasPayloadRegions", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<
      "Called after autocast has put the op in `lowType`: makes the op "
      "consistent (payload, generated body) or rebuilds it; returns the "
      "values that replace its results (empty: the op stays).",
      "::llvm::SmallVector<::mlir::Value>", "finishInPrecision",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Type":$lowType), [{}],
      [{ return {}; }]>,
    InterfaceMethod<
      "Returns the op's floating-point operations for the autocast report "
      "(a negative value: amp's own cost model).",
      "double", "estimateFlops", (ins), [{}], [{ return -1.0; }]>,
  ];
}

#endif // AMP_DIALECT_AMP_IR_AMPINTERFACES_TD

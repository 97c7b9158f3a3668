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
  ];
}

#endif // AMP_DIALECT_AMP_IR_AMPINTERFACES_TD

//===- AmpBase.td - amp dialect, types and op base classes -*- tablegen -*-===//
//
// The `amp` dialect holds neural-network graphs at ONNX-operator granularity.
// Every op models the newest ONNX version of its operator that amp supports;
// the importer upgrades older opsets (attributes that became inputs, ...).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPBASE_TD
#define AMP_DIALECT_AMP_IR_AMPBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "amp/Dialect/Amp/IR/AmpInterfaces.td"

def Amp_Dialect : Dialect {
  let name = "amp";
  let cppNamespace = "::mlir::amp";
  let summary = "Neural-network graphs at ONNX-operator granularity";
  let description = [{
    The `amp` dialect is the graph representation of the amp mixed-precision
    compiler. Each op corresponds to one ONNX operator (newest supported
    version); optional ONNX inputs that are absent are `none` values produced
    by `amp.none`. Tensors are ranked, with static or dynamic dimensions.
  }];
  let hasConstantMaterializer = 1;
  let hasCanonicalizer = 1;
  // Verifies `amp.accumulate` (see PrecisionOpInterface).
  let hasOperationAttrVerify = 1;
  // Attributes live in the attribute dictionary: the ONNX importer builds ops
  // generically from ONNX attribute names.
  let usePropertiesForAttributes = 0;
  let useDefaultAttributePrinterParser = 0;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Amp_FloatElement : AnyTypeOf<[F64, F32, F16, BF16]>;
def Amp_IntElement : AnyTypeOf<[I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def Amp_Element : AnyTypeOf<[F64, F32, F16, BF16, I1, I8, I16, I32, I64,
                             UI8, UI16, UI32, UI64]>;

def Amp_Tensor : RankedTensorOf<[Amp_Element]>;
// Storage types: ONNX's 8-bit floats and 4- and 2-bit integers. amp computes
// on them only through Cast, CastLike, QuantizeLinear and DequantizeLinear;
// ops that only move data take them too. Every other op's constraints
// reject them.
def Amp_StorageElement : AnyTypeOf<[F8E4M3FN, F8E4M3FNUZ, F8E5M2,
                                    F8E5M2FNUZ, I<4>, UI<4>, I<2>, UI<2>]>;
def Amp_AnyTensor : RankedTensorOf<[Amp_Element, Amp_StorageElement]>;
def Amp_FloatTensor : RankedTensorOf<[Amp_FloatElement]>;
def Amp_BoolTensor : RankedTensorOf<[I1]>;
def Amp_IndexTensor : RankedTensorOf<[I32, I64]>;
def Amp_I64Tensor : RankedTensorOf<[I64]>;
def Amp_OptTensor : AnyTypeOf<[Amp_Tensor, NoneType]>;
def Amp_OptAnyTensor : AnyTypeOf<[Amp_AnyTensor, NoneType]>;
def Amp_OptIndexTensor : AnyTypeOf<[Amp_IndexTensor, NoneType]>;
// The 8-bit integers of the integer and QLinear ops (MatMulInteger, ...).
def Amp_Int8Tensor : RankedTensorOf<[I8, UI8]>;
def Amp_OptInt8Tensor : AnyTypeOf<[Amp_Int8Tensor, NoneType]>;
def Amp_I32Tensor : RankedTensorOf<[I32]>;
def Amp_OptI32Tensor : AnyTypeOf<[Amp_I32Tensor, NoneType]>;

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

/// Base of every amp op. `onnxName` is the ONNX operator type the op models
/// ("" for amp-only ops such as `amp.none`). `shapeFn` is the C++ function in
/// `mlir::amp::shape` that infers result types (see AmpShapeInference.h):
/// either its name, called as `name(ctx, inferred)`, or a whole call that
/// passes attributes read through the op's adaptor (`adaptor`), e.g.
/// `inferConcat(ctx, adaptor.getAxis(), inferred)`. The adaptor sees the
/// attributes with their defaults filled in and checked against ODS.
class Amp_Op<string onnxName, string mnemonic, string shapeFn,
             list<Trait> traits = []>
    : Op<Amp_Dialect, mnemonic, !listconcat(traits, [
          DeclareOpInterfaceMethods<InferTypeOpInterface>,
          Amp_PrecisionOpInterface])> {
  // Mixed precision (see PrecisionOpInterface): ODS operand/result indices
  // that never change type, operands that take any float type, and whether
  // the op can accumulate in fp32 while its I/O is fp16/bf16.
  list<int> fixedTypeOperands = [];
  list<int> anyTypeOperands = [];
  list<int> fixedTypeResults = [];
  bit canAccumulateInF32 = 0;

  code onnxDecl = "static constexpr ::llvm::StringLiteral getOnnxName() { "
                  "return \"" # onnxName # "\"; }\n"
                  "static bool isCompatibleReturnTypes(::mlir::TypeRange lhs, "
                  "::mlir::TypeRange rhs);\n";
  code precisionDecl =
      "static bool isFixedTypeOperandIndex(unsigned i) { (void)i; return "
      # !foldl("false", fixedTypeOperands, acc, x,
               acc # " || i == " # !cast<string>(x)) # "; }\n"
      "static bool isAnyTypeOperandIndex(unsigned i) { (void)i; return "
      # !foldl("false", anyTypeOperands, acc, x,
               acc # " || i == " # !cast<string>(x)) # "; }\n"
      "static bool isFixedTypeResultIndex(unsigned i) { (void)i; return "
      # !foldl("false", fixedTypeResults, acc, x,
               acc # " || i == " # !cast<string>(x)) # "; }\n"
      "static constexpr bool kCanAccumulateInF32 = "
      # !if(canAccumulateInF32, "true", "false") # ";\n";
  let extraClassDeclaration = onnxDecl # precisionDecl;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, ::std::optional<::mlir::Location> loc,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::OpaqueProperties, ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      [[maybe_unused]] Adaptor adaptor(operands,
          ::mlir::amp::shape::withDefaultAttributes(getOperationName(),
                                                    context, attributes),
          {}, regions);
      if (::mlir::failed(
              ::mlir::amp::shape::verifyAttributes(adaptor, context, loc)))
        return ::mlir::failure();
      ::mlir::amp::shape::InferenceContext ctx(context, loc, operands,
                                              regions);
      using namespace ::mlir::amp;
      return ::mlir::amp::shape::}]
      # !if(!ne(!find(shapeFn, "("), -1), shapeFn,
            shapeFn # "(ctx, inferred)") # [{;
    }
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange lhs,
                                            ::mlir::TypeRange rhs) {
      return ::mlir::amp::shape::areCompatibleTypes(lhs, rhs);
    }
  }];
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

/// A side-effect-free op modelling an ONNX operator.
class Amp_PureOp<string onnxName, string mnemonic, string shapeFn,
                 list<Trait> traits = []>
    : Amp_Op<onnxName, mnemonic, shapeFn, !listconcat(traits, [Pure])>;

/// Elementwise op with one tensor input and a result of the same type.
class Amp_UnaryOp<string onnxName, string mnemonic, dag attrs = (ins),
                  Type operandType = Amp_Tensor>
    : Amp_PureOp<onnxName, mnemonic, "inferSameAsFirst"> {
  let summary = "ONNX " # onnxName # " (elementwise)";
  let arguments = !con((ins operandType:$X), attrs);
  let results = (outs operandType:$Y);
}

/// Elementwise op with numpy-style broadcasting of two inputs; the result has
/// the element type of the first input.
class Amp_BinaryOp<string onnxName, string mnemonic, dag attrs = (ins)>
    : Amp_PureOp<onnxName, mnemonic, "inferBroadcast"> {
  let summary = "ONNX " # onnxName # " (broadcasting elementwise)";
  let arguments = !con((ins Amp_Tensor:$A, Amp_Tensor:$B), attrs);
  let results = (outs Amp_Tensor:$C);
}

/// Broadcasting comparison or logical op producing an i1 tensor.
class Amp_CompareOp<string onnxName, string mnemonic>
    : Amp_PureOp<onnxName, mnemonic, "inferBroadcastBool"> {
  let summary = "ONNX " # onnxName # " (broadcasting, boolean result)";
  let arguments = (ins Amp_Tensor:$A, Amp_Tensor:$B);
  let results = (outs Amp_BoolTensor:$C);
}

/// Broadcasting op over a variadic list of inputs of one element type.
class Amp_VariadicOp<string onnxName, string mnemonic>
    : Amp_PureOp<onnxName, mnemonic, "inferBroadcast"> {
  let summary = "ONNX " # onnxName # " (variadic, broadcasting)";
  let arguments = (ins Variadic<Amp_Tensor>:$data_0);
  let results = (outs Amp_Tensor:$result);
}

/// Reduction over `axes` (an optional 1-D i64 input).
class Amp_ReduceOp<string onnxName, string mnemonic>
    : Amp_PureOp<onnxName, mnemonic,
                 "inferReduce(ctx, semantics::ReduceAttrs::get(adaptor), "
                 "inferred)"> {
  let summary = "ONNX " # onnxName # " (reduction over axes)";
  let arguments = (ins Amp_Tensor:$data, Amp_OptIndexTensor:$axes,
                       DefaultValuedAttr<I64Attr, "1">:$keepdims,
                       DefaultValuedAttr<I64Attr, "0">:$noop_with_empty_axes);
  let results = (outs Amp_Tensor:$reduced);
}

/// Softmax-like op normalising along one axis.
class Amp_AxisOp<string onnxName, string mnemonic>
    : Amp_PureOp<onnxName, mnemonic, "inferSameAsFirst"> {
  let summary = "ONNX " # onnxName # " (along one axis)";
  let arguments = (ins Amp_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Amp_FloatTensor:$output);
}

#endif // AMP_DIALECT_AMP_IR_AMPBASE_TD

//===- AmpOps.td - amp dialect operations ------------------*- tablegen -*-===//
//
// One op per ONNX operator. Operand and attribute names follow the ONNX
// operator schema so that the importer can build ops generically; absent
// optional inputs are `none` values.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPOPS_TD
#define AMP_DIALECT_AMP_IR_AMPOPS_TD

include "amp/Dialect/Amp/IR/AmpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Structural ops
//===----------------------------------------------------------------------===//

def Amp_NoneOp : Op<Amp_Dialect, "none", [Pure]> {
  let summary = "The absent value of an optional ONNX input";
  let results = (outs NoneType:$none);
  let assemblyFormat = "attr-dict";
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral getOnnxName() { return ""; }
  }];
}

def Amp_ConstantOp : Amp_PureOp<"Constant", "constant",
    "inferConstant(ctx, adaptor.getValueAttr(), inferred)", [ConstantLike]> {
  let summary = "A constant tensor (ONNX Constant and initializers)";
  let description = [{
    Holds a constant tensor. Model weights are `dense_resource` attributes
    (stored once, outside the attribute uniquer); small folded shape values
    are `dense` attributes.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Amp_AnyTensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Amp_YieldOp : Op<Amp_Dialect, "yield", [Pure, Terminator,
    ParentOneOf<["IfOp", "LoopOp", "ScanOp"]>]> {
  let summary = "Terminates the body of amp.if, amp.loop and amp.scan";
  let arguments = (ins Variadic<Amp_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral getOnnxName() { return ""; }
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

def Amp_AbsOp : Amp_UnaryOp<"Abs", "abs"> { let hasFolder = 1; }
def Amp_AcosOp : Amp_UnaryOp<"Acos", "acos", (ins), Amp_FloatTensor>;
def Amp_AcoshOp : Amp_UnaryOp<"Acosh", "acosh", (ins), Amp_FloatTensor>;
def Amp_AsinOp : Amp_UnaryOp<"Asin", "asin", (ins), Amp_FloatTensor>;
def Amp_AsinhOp : Amp_UnaryOp<"Asinh", "asinh", (ins), Amp_FloatTensor>;
def Amp_AtanOp : Amp_UnaryOp<"Atan", "atan", (ins), Amp_FloatTensor>;
def Amp_AtanhOp : Amp_UnaryOp<"Atanh", "atanh", (ins), Amp_FloatTensor>;
def Amp_BitwiseNotOp : Amp_UnaryOp<"BitwiseNot", "bitwise_not">;
def Amp_CeilOp : Amp_UnaryOp<"Ceil", "ceil", (ins), Amp_FloatTensor>;
def Amp_CosOp : Amp_UnaryOp<"Cos", "cos", (ins), Amp_FloatTensor>;
def Amp_CoshOp : Amp_UnaryOp<"Cosh", "cosh", (ins), Amp_FloatTensor>;
def Amp_ErfOp : Amp_UnaryOp<"Erf", "erf">;
def Amp_ExpOp : Amp_UnaryOp<"Exp", "exp", (ins), Amp_FloatTensor>;
def Amp_FloorOp : Amp_UnaryOp<"Floor", "floor", (ins), Amp_FloatTensor>;
def Amp_HardSwishOp : Amp_UnaryOp<"HardSwish", "hard_swish", (ins),
                                  Amp_FloatTensor>;
def Amp_IdentityOp : Amp_UnaryOp<"Identity", "identity", (ins),
                                 Amp_AnyTensor> {
  let hasFolder = 1;
}
def Amp_LogOp : Amp_UnaryOp<"Log", "log", (ins), Amp_FloatTensor>;
def Amp_MishOp : Amp_UnaryOp<"Mish", "mish", (ins), Amp_FloatTensor>;
def Amp_NegOp : Amp_UnaryOp<"Neg", "neg"> { let hasFolder = 1; }
def Amp_NotOp : Amp_UnaryOp<"Not", "not", (ins), Amp_BoolTensor> {
  let hasFolder = 1;
}
def Amp_ReciprocalOp : Amp_UnaryOp<"Reciprocal", "reciprocal", (ins),
                                   Amp_FloatTensor>;
def Amp_ReluOp : Amp_UnaryOp<"Relu", "relu">;
def Amp_RoundOp : Amp_UnaryOp<"Round", "round", (ins), Amp_FloatTensor>;
def Amp_SigmoidOp : Amp_UnaryOp<"Sigmoid", "sigmoid", (ins), Amp_FloatTensor>;
def Amp_SignOp : Amp_UnaryOp<"Sign", "sign"> { let hasFolder = 1; }
def Amp_SinOp : Amp_UnaryOp<"Sin", "sin", (ins), Amp_FloatTensor>;
def Amp_SinhOp : Amp_UnaryOp<"Sinh", "sinh", (ins), Amp_FloatTensor>;
def Amp_SoftplusOp : Amp_UnaryOp<"Softplus", "softplus", (ins),
                                 Amp_FloatTensor>;
def Amp_SoftsignOp : Amp_UnaryOp<"Softsign", "softsign", (ins),
                                 Amp_FloatTensor>;
def Amp_SqrtOp : Amp_UnaryOp<"Sqrt", "sqrt", (ins), Amp_FloatTensor>;
def Amp_TanOp : Amp_UnaryOp<"Tan", "tan", (ins), Amp_FloatTensor>;
def Amp_TanhOp : Amp_UnaryOp<"Tanh", "tanh", (ins), Amp_FloatTensor>;

// Unary ops with attributes.
def Amp_CeluOp : Amp_UnaryOp<"Celu", "celu",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha), Amp_FloatTensor>;
def Amp_EluOp : Amp_UnaryOp<"Elu", "elu",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha), Amp_FloatTensor>;
def Amp_GeluOp : Amp_UnaryOp<"Gelu", "gelu",
    (ins DefaultValuedStrAttr<StrAttr, "none">:$approximate), Amp_FloatTensor>;
def Amp_HardSigmoidOp : Amp_UnaryOp<"HardSigmoid", "hard_sigmoid",
    (ins DefaultValuedAttr<F32Attr, "0.2">:$alpha,
         DefaultValuedAttr<F32Attr, "0.5">:$beta), Amp_FloatTensor>;
def Amp_LeakyReluOp : Amp_UnaryOp<"LeakyRelu", "leaky_relu",
    (ins DefaultValuedAttr<F32Attr, "0.01">:$alpha), Amp_FloatTensor>;
def Amp_SeluOp : Amp_UnaryOp<"Selu", "selu",
    (ins DefaultValuedAttr<F32Attr, "1.67326">:$alpha,
         DefaultValuedAttr<F32Attr, "1.0507">:$gamma), Amp_FloatTensor>;
def Amp_ShrinkOp : Amp_UnaryOp<"Shrink", "shrink",
    (ins DefaultValuedAttr<F32Attr, "0.0">:$bias,
         DefaultValuedAttr<F32Attr, "0.5">:$lambd)>;
def Amp_ThresholdedReluOp : Amp_UnaryOp<"ThresholdedRelu", "thresholded_relu",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha), Amp_FloatTensor>;
def Amp_LpNormalizationOp : Amp_UnaryOp<"LpNormalization", "lp_normalization",
    (ins DefaultValuedAttr<I64Attr, "-1">:$axis,
         DefaultValuedAttr<I64Attr, "2">:$p), Amp_FloatTensor> {
  let canAccumulateInF32 = 1;
}
def Amp_MeanVarianceNormalizationOp : Amp_UnaryOp<"MeanVarianceNormalization",
    "mean_variance_normalization",
    (ins DefaultValuedAttr<DenseI64ArrayAttr, "{0, 2, 3}">:$axes),
    Amp_FloatTensor> {
  let canAccumulateInF32 = 1;
}
def Amp_LRNOp : Amp_UnaryOp<"LRN", "lrn",
    (ins DefaultValuedAttr<F32Attr, "0.0001">:$alpha,
         DefaultValuedAttr<F32Attr, "0.75">:$beta,
         DefaultValuedAttr<F32Attr, "1.0">:$bias, I64Attr:$size),
    Amp_FloatTensor>;

def Amp_IsNaNOp : Amp_PureOp<"IsNaN", "is_nan", "inferBoolLikeFirst"> {
  let anyTypeOperands = [0];
  let summary = "ONNX IsNaN";
  let arguments = (ins Amp_FloatTensor:$X);
  let results = (outs Amp_BoolTensor:$Y);
}
def Amp_IsInfOp : Amp_PureOp<"IsInf", "is_inf", "inferBoolLikeFirst"> {
  let anyTypeOperands = [0];
  let summary = "ONNX IsInf";
  let arguments = (ins Amp_FloatTensor:$X,
                       DefaultValuedAttr<I64Attr, "1">:$detect_negative,
                       DefaultValuedAttr<I64Attr, "1">:$detect_positive);
  let results = (outs Amp_BoolTensor:$Y);
}

def Amp_ClipOp : Amp_PureOp<"Clip", "clip", "inferSameAsFirst"> {
  let summary = "ONNX Clip (min and max are optional scalar inputs)";
  let arguments = (ins Amp_Tensor:$input, Amp_OptTensor:$min,
                       Amp_OptTensor:$max);
  let results = (outs Amp_Tensor:$output);
}

def Amp_CumSumOp : Amp_PureOp<"CumSum", "cumsum", "inferSameAsFirst"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX CumSum";
  let arguments = (ins Amp_Tensor:$x, Amp_IndexTensor:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$exclusive,
                       DefaultValuedAttr<I64Attr, "0">:$reverse);
  let results = (outs Amp_Tensor:$y);
}

def Amp_TriluOp : Amp_PureOp<"Trilu", "trilu", "inferSameAsFirst"> {
  let summary = "ONNX Trilu";
  let arguments = (ins Amp_Tensor:$input, Amp_OptIndexTensor:$k,
                       DefaultValuedAttr<I64Attr, "1">:$upper);
  let results = (outs Amp_Tensor:$output);
}

def Amp_ReverseSequenceOp : Amp_PureOp<"ReverseSequence", "reverse_sequence",
    "inferReverseSequence(ctx, adaptor.getBatchAxis(), adaptor.getTimeAxis(), "
    "inferred)"> {
  let summary = "ONNX ReverseSequence";
  let arguments = (ins Amp_Tensor:$input, Amp_I64Tensor:$sequence_lens,
                       DefaultValuedAttr<I64Attr, "1">:$batch_axis,
                       DefaultValuedAttr<I64Attr, "0">:$time_axis);
  let results = (outs Amp_Tensor:$Y);
}

def Amp_SoftmaxOp : Amp_AxisOp<"Softmax", "softmax"> {
  let canAccumulateInF32 = 1;
}
def Amp_LogSoftmaxOp : Amp_AxisOp<"LogSoftmax", "log_softmax"> {
  let canAccumulateInF32 = 1;
}
def Amp_HardmaxOp : Amp_AxisOp<"Hardmax", "hardmax">;

def Amp_DropoutOp : Amp_PureOp<"Dropout", "dropout", "inferDropout"> {
  let fixedTypeOperands = [1];
  let summary = "ONNX Dropout (output and mask)";
  let arguments = (ins Amp_Tensor:$data, Amp_OptTensor:$ratio,
                       AnyTypeOf<[Amp_BoolTensor, NoneType]>:$training_mode,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs Amp_Tensor:$output, Amp_BoolTensor:$mask);
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Broadcasting binary and variadic ops
//===----------------------------------------------------------------------===//

def Amp_AddOp : Amp_BinaryOp<"Add", "add"> { let hasFolder = 1; }
def Amp_SubOp : Amp_BinaryOp<"Sub", "sub"> { let hasFolder = 1; }
def Amp_MulOp : Amp_BinaryOp<"Mul", "mul"> { let hasFolder = 1; }
def Amp_DivOp : Amp_BinaryOp<"Div", "div"> { let hasFolder = 1; }
def Amp_ModOp : Amp_BinaryOp<"Mod", "mod",
    (ins DefaultValuedAttr<I64Attr, "0">:$fmod)> {
  let hasFolder = 1;
}
def Amp_PowOp : Amp_PureOp<"Pow", "pow", "inferBroadcastMixed"> {
  let fixedTypeOperands = [1];
  let summary = "ONNX Pow (base and exponent may have different types)";
  let arguments = (ins Amp_Tensor:$X, Amp_Tensor:$Y);
  let results = (outs Amp_Tensor:$Z);
}
def Amp_PReluOp : Amp_BinaryOp<"PRelu", "prelu">;
def Amp_BitShiftOp : Amp_BinaryOp<"BitShift", "bit_shift",
    (ins StrAttr:$direction)>;
def Amp_BitwiseAndOp : Amp_BinaryOp<"BitwiseAnd", "bitwise_and">;
def Amp_BitwiseOrOp : Amp_BinaryOp<"BitwiseOr", "bitwise_or">;
def Amp_BitwiseXorOp : Amp_BinaryOp<"BitwiseXor", "bitwise_xor">;

def Amp_EqualOp : Amp_CompareOp<"Equal", "equal"> { let hasFolder = 1; }
def Amp_GreaterOp : Amp_CompareOp<"Greater", "greater"> { let hasFolder = 1; }
def Amp_GreaterOrEqualOp : Amp_CompareOp<"GreaterOrEqual", "greater_or_equal"> {
  let hasFolder = 1;
}
def Amp_LessOp : Amp_CompareOp<"Less", "less"> { let hasFolder = 1; }
def Amp_LessOrEqualOp : Amp_CompareOp<"LessOrEqual", "less_or_equal"> {
  let hasFolder = 1;
}
def Amp_AndOp : Amp_CompareOp<"And", "and"> { let hasFolder = 1; }
def Amp_OrOp : Amp_CompareOp<"Or", "or"> { let hasFolder = 1; }
def Amp_XorOp : Amp_CompareOp<"Xor", "xor"> { let hasFolder = 1; }

def Amp_MaxOp : Amp_VariadicOp<"Max", "max"> { let hasFolder = 1; }
def Amp_MinOp : Amp_VariadicOp<"Min", "min"> { let hasFolder = 1; }
def Amp_SumOp : Amp_VariadicOp<"Sum", "sum">;
def Amp_MeanOp : Amp_VariadicOp<"Mean", "mean">;

def Amp_WhereOp : Amp_PureOp<"Where", "where", "inferWhere"> {
  let summary = "ONNX Where (broadcasting select)";
  let arguments = (ins Amp_BoolTensor:$condition, Amp_Tensor:$X,
                       Amp_Tensor:$Y);
  let results = (outs Amp_Tensor:$output);
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Amp_ReduceL1Op : Amp_ReduceOp<"ReduceL1", "reduce_l1"> {
  let canAccumulateInF32 = 1;
}
def Amp_ReduceL2Op : Amp_ReduceOp<"ReduceL2", "reduce_l2"> {
  let canAccumulateInF32 = 1;
}
def Amp_ReduceLogSumOp : Amp_ReduceOp<"ReduceLogSum", "reduce_log_sum"> {
  let canAccumulateInF32 = 1;
}
def Amp_ReduceLogSumExpOp : Amp_ReduceOp<"ReduceLogSumExp",
                                         "reduce_log_sum_exp"> {
  let canAccumulateInF32 = 1;
}
def Amp_ReduceMaxOp : Amp_ReduceOp<"ReduceMax", "reduce_max">;
def Amp_ReduceMeanOp : Amp_ReduceOp<"ReduceMean", "reduce_mean"> {
  let canAccumulateInF32 = 1;
}
def Amp_ReduceMinOp : Amp_ReduceOp<"ReduceMin", "reduce_min">;
def Amp_ReduceProdOp : Amp_ReduceOp<"ReduceProd", "reduce_prod">;
def Amp_ReduceSumOp : Amp_ReduceOp<"ReduceSum", "reduce_sum"> {
  let canAccumulateInF32 = 1;
}
def Amp_ReduceSumSquareOp : Amp_ReduceOp<"ReduceSumSquare",
                                         "reduce_sum_square"> {
  let canAccumulateInF32 = 1;
}

class Amp_ArgReduceOp<string onnxName, string mnemonic>
    : Amp_PureOp<onnxName, mnemonic,
    "inferArgReduce(ctx, semantics::ArgReduceAttrs::get(adaptor), inferred)"> {
  let summary = "ONNX " # onnxName;
  let arguments = (ins Amp_Tensor:$data,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedAttr<I64Attr, "1">:$keepdims,
                       DefaultValuedAttr<I64Attr, "0">:$select_last_index);
  let results = (outs Amp_I64Tensor:$reduced);
}
def Amp_ArgMaxOp : Amp_ArgReduceOp<"ArgMax", "arg_max">;
def Amp_ArgMinOp : Amp_ArgReduceOp<"ArgMin", "arg_min">;

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Amp_MatMulOp : Amp_PureOp<"MatMul", "matmul", "inferMatMul"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX MatMul (numpy matmul semantics)";
  let arguments = (ins Amp_Tensor:$A, Amp_Tensor:$B);
  let results = (outs Amp_Tensor:$Y);
}

def Amp_GemmOp : Amp_PureOp<"Gemm", "gemm",
    "inferGemm(ctx, semantics::GemmAttrs::get(adaptor), inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX Gemm: alpha * op(A) * op(B) + beta * C";
  let arguments = (ins Amp_Tensor:$A, Amp_Tensor:$B, Amp_OptTensor:$C,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       DefaultValuedAttr<I64Attr, "0">:$transA,
                       DefaultValuedAttr<I64Attr, "0">:$transB);
  let results = (outs Amp_Tensor:$Y);
}

def Amp_EinsumOp : Amp_PureOp<"Einsum", "einsum",
    "inferEinsum(ctx, adaptor.getEquation(), inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX Einsum";
  let arguments = (ins Variadic<Amp_Tensor>:$Inputs, StrAttr:$equation);
  let results = (outs Amp_Tensor:$Output);
}

//===----------------------------------------------------------------------===//
// Convolution, pooling, normalisation
//===----------------------------------------------------------------------===//

def Amp_ConvOp : Amp_PureOp<"Conv", "conv",
    "inferConv(ctx, semantics::WindowAttrs::getConv(adaptor), inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX Conv (N-d, grouped)";
  let arguments = (ins Amp_FloatTensor:$X, Amp_FloatTensor:$W,
                       Amp_OptTensor:$B,
                       DefaultValuedStrAttr<StrAttr, "NOTSET">:$auto_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Amp_FloatTensor:$Y);
}

def Amp_ConvTransposeOp : Amp_PureOp<"ConvTranspose", "conv_transpose",
    "inferConvTranspose(ctx, "
    "semantics::WindowAttrs::getConvTranspose(adaptor), inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX ConvTranspose";
  let arguments = (ins Amp_FloatTensor:$X, Amp_FloatTensor:$W,
                       Amp_OptTensor:$B,
                       DefaultValuedStrAttr<StrAttr, "NOTSET">:$auto_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$output_padding,
                       OptionalAttr<DenseI64ArrayAttr>:$output_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Amp_FloatTensor:$Y);
}

def Amp_MaxPoolOp : Amp_PureOp<"MaxPool", "max_pool",
    "inferMaxPool(ctx, semantics::WindowAttrs::getPool(adaptor), inferred)"> {
  let summary = "ONNX MaxPool (values and flat indices)";
  let arguments = (ins Amp_Tensor:$X,
                       DefaultValuedStrAttr<StrAttr, "NOTSET">:$auto_pad,
                       DefaultValuedAttr<I64Attr, "0">:$ceil_mode,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DenseI64ArrayAttr:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       DefaultValuedAttr<I64Attr, "0">:$storage_order,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Amp_Tensor:$Y, Amp_I64Tensor:$Indices);
}

def Amp_AveragePoolOp : Amp_PureOp<"AveragePool", "average_pool",
    "inferPool(ctx, semantics::WindowAttrs::getPool(adaptor), inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX AveragePool";
  let arguments = (ins Amp_FloatTensor:$X,
                       DefaultValuedStrAttr<StrAttr, "NOTSET">:$auto_pad,
                       DefaultValuedAttr<I64Attr, "0">:$ceil_mode,
                       DefaultValuedAttr<I64Attr, "0">:$count_include_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DenseI64ArrayAttr:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Amp_FloatTensor:$Y);
}

def Amp_LpPoolOp : Amp_PureOp<"LpPool", "lp_pool",
    "inferPool(ctx, semantics::WindowAttrs::getPool(adaptor), inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX LpPool";
  let arguments = (ins Amp_FloatTensor:$X,
                       DefaultValuedStrAttr<StrAttr, "NOTSET">:$auto_pad,
                       DefaultValuedAttr<I64Attr, "0">:$ceil_mode,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DenseI64ArrayAttr:$kernel_shape,
                       DefaultValuedAttr<I64Attr, "2">:$p,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Amp_FloatTensor:$Y);
}

class Amp_GlobalPoolOp<string onnxName, string mnemonic, dag attrs = (ins)>
    : Amp_PureOp<onnxName, mnemonic, "inferGlobalPool"> {
  let summary = "ONNX " # onnxName;
  let arguments = !con((ins Amp_FloatTensor:$X), attrs);
  let results = (outs Amp_FloatTensor:$Y);
}
def Amp_GlobalAveragePoolOp : Amp_GlobalPoolOp<"GlobalAveragePool",
                                               "global_average_pool"> {
  let canAccumulateInF32 = 1;
}
def Amp_GlobalMaxPoolOp : Amp_GlobalPoolOp<"GlobalMaxPool", "global_max_pool">;
def Amp_GlobalLpPoolOp : Amp_GlobalPoolOp<"GlobalLpPool", "global_lp_pool",
    (ins DefaultValuedAttr<I64Attr, "2">:$p)> {
  let canAccumulateInF32 = 1;
}

def Amp_BatchNormalizationOp : Amp_PureOp<"BatchNormalization",
    "batch_normalization",
    "inferBatchNorm(ctx, adaptor.getTrainingMode() != 0, inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX BatchNormalization (running stats only in training)";
  let arguments = (ins Amp_FloatTensor:$X, Amp_FloatTensor:$scale,
                       Amp_FloatTensor:$B, Amp_FloatTensor:$input_mean,
                       Amp_FloatTensor:$input_var,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.9">:$momentum,
                       DefaultValuedAttr<I64Attr, "0">:$training_mode);
  let results = (outs Amp_FloatTensor:$Y,
                      Variadic<Amp_FloatTensor>:$running_stats);
}

def Amp_InstanceNormalizationOp : Amp_PureOp<"InstanceNormalization",
    "instance_normalization", "inferSameAsFirst"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX InstanceNormalization";
  let arguments = (ins Amp_FloatTensor:$input, Amp_FloatTensor:$scale,
                       Amp_FloatTensor:$B,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Amp_FloatTensor:$output);
}

def Amp_LayerNormalizationOp : Amp_PureOp<"LayerNormalization",
    "layer_normalization",
    "inferLayerNorm(ctx, adaptor.getAxis(), adaptor.getStashType(), "
    "inferred)"> {
  let canAccumulateInF32 = 1;
  let fixedTypeResults = [1, 2];
  let summary = "ONNX LayerNormalization (Y, Mean, InvStdDev)";
  let arguments = (ins Amp_FloatTensor:$X, Amp_FloatTensor:$Scale,
                       Amp_OptTensor:$B,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs Amp_FloatTensor:$Y, Amp_FloatTensor:$Mean,
                      Amp_FloatTensor:$InvStdDev);
}

def Amp_GroupNormalizationOp : Amp_PureOp<"GroupNormalization",
    "group_normalization", "inferSameAsFirst"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX GroupNormalization";
  let arguments = (ins Amp_FloatTensor:$X, Amp_FloatTensor:$scale,
                       Amp_FloatTensor:$bias,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       I64Attr:$num_groups,
                       DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs Amp_FloatTensor:$Y);
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

def Amp_ShapeOp : Amp_PureOp<"Shape", "shape",
    "inferShapeOp(ctx, adaptor.getStart(), adaptor.getEnd(), inferred)"> {
  let anyTypeOperands = [0];
  let summary = "ONNX Shape (dimensions in [start, end))";
  let arguments = (ins Amp_AnyTensor:$data, OptionalAttr<I64Attr>:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs Amp_I64Tensor:$shape);
  let hasFolder = 1;
}

def Amp_SizeOp : Amp_PureOp<"Size", "size", "inferSize"> {
  let anyTypeOperands = [0];
  let summary = "ONNX Size (element count as a 0-d i64 tensor)";
  let arguments = (ins Amp_AnyTensor:$data);
  let results = (outs Amp_I64Tensor:$size);
  let hasFolder = 1;
}

def Amp_CastOp : Amp_PureOp<"Cast", "cast",
    "inferCast(ctx, adaptor.getTo(), inferred)"> {
  let anyTypeOperands = [0];
  let fixedTypeResults = [0];
  let summary = "ONNX Cast to the element type `to`";
  let arguments = (ins Amp_AnyTensor:$input, TypeAttr:$to,
                       DefaultValuedAttr<I64Attr, "1">:$saturate);
  let results = (outs Amp_AnyTensor:$output);
  let hasFolder = 1;
}

def Amp_CastLikeOp : Amp_PureOp<"CastLike", "cast_like", "inferCastLike"> {
  let anyTypeOperands = [0];
  let summary = "ONNX CastLike";
  let arguments = (ins Amp_AnyTensor:$input, Amp_AnyTensor:$target_type,
                       DefaultValuedAttr<I64Attr, "1">:$saturate);
  let results = (outs Amp_AnyTensor:$output);
}

def Amp_ReshapeOp : Amp_PureOp<"Reshape", "reshape",
    "inferReshape(ctx, adaptor.getAllowzero() != 0, inferred)"> {
  let summary = "ONNX Reshape";
  let arguments = (ins Amp_AnyTensor:$data, Amp_I64Tensor:$shape,
                       DefaultValuedAttr<I64Attr, "0">:$allowzero);
  let results = (outs Amp_AnyTensor:$reshaped);
  let hasFolder = 1;
}

def Amp_FlattenOp : Amp_PureOp<"Flatten", "flatten",
    "inferFlatten(ctx, adaptor.getAxis(), inferred)"> {
  let summary = "ONNX Flatten (to 2-d at `axis`)";
  let arguments = (ins Amp_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Amp_Tensor:$output);
  let hasFolder = 1;
}

def Amp_SqueezeOp : Amp_PureOp<"Squeeze", "squeeze", "inferSqueeze"> {
  let summary = "ONNX Squeeze";
  let arguments = (ins Amp_Tensor:$data, AnyTypeOf<[Amp_I64Tensor, NoneType]>:$axes);
  let results = (outs Amp_Tensor:$squeezed);
  let hasFolder = 1;
}

def Amp_UnsqueezeOp : Amp_PureOp<"Unsqueeze", "unsqueeze", "inferUnsqueeze"> {
  let summary = "ONNX Unsqueeze";
  let arguments = (ins Amp_Tensor:$data, Amp_I64Tensor:$axes);
  let results = (outs Amp_Tensor:$expanded);
  let hasFolder = 1;
}

def Amp_TransposeOp : Amp_PureOp<"Transpose", "transpose",
    "inferTranspose(ctx, adaptor.getPerm(), inferred)"> {
  let summary = "ONNX Transpose (default: reverse the dimensions)";
  let arguments = (ins Amp_Tensor:$data,
                       OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs Amp_Tensor:$transposed);
  let hasFolder = 1;
}

def Amp_ConcatOp : Amp_PureOp<"Concat", "concat",
    "inferConcat(ctx, adaptor.getAxis(), inferred)"> {
  let summary = "ONNX Concat";
  let arguments = (ins Variadic<Amp_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Amp_Tensor:$concat_result);
  let hasFolder = 1;
}

def Amp_SplitOp : Amp_PureOp<"Split", "split",
    "inferSplit(ctx, adaptor.getAxis(), adaptor.getNumOutputs(), inferred)"> {
  let summary = "ONNX Split (by `split` sizes or into `num_outputs` parts)";
  let arguments = (ins Amp_Tensor:$input,
                       AnyTypeOf<[Amp_I64Tensor, NoneType]>:$split,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       I64Attr:$num_outputs);
  let results = (outs Variadic<Amp_Tensor>:$outputs);
}

def Amp_SliceOp : Amp_PureOp<"Slice", "slice", "inferSlice"> {
  let summary = "ONNX Slice";
  let arguments = (ins Amp_Tensor:$data, Amp_IndexTensor:$starts,
                       Amp_IndexTensor:$ends, Amp_OptIndexTensor:$axes,
                       Amp_OptIndexTensor:$steps);
  let results = (outs Amp_Tensor:$output);
  let hasFolder = 1;
}

def Amp_GatherOp : Amp_PureOp<"Gather", "gather",
    "inferGather(ctx, adaptor.getAxis(), inferred)"> {
  let summary = "ONNX Gather";
  let arguments = (ins Amp_Tensor:$data, Amp_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Amp_Tensor:$output);
  let hasFolder = 1;
}

def Amp_GatherElementsOp : Amp_PureOp<"GatherElements", "gather_elements",
    "inferGatherElements(ctx, adaptor.getAxis(), inferred)"> {
  let summary = "ONNX GatherElements";
  let arguments = (ins Amp_Tensor:$data, Amp_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Amp_Tensor:$output);
}

def Amp_GatherNDOp : Amp_PureOp<"GatherND", "gather_nd",
    "inferGatherND(ctx, adaptor.getBatchDims(), inferred)"> {
  let summary = "ONNX GatherND";
  let arguments = (ins Amp_Tensor:$data, Amp_I64Tensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Amp_Tensor:$output);
}

def Amp_ScatterElementsOp : Amp_PureOp<"ScatterElements", "scatter_elements",
                                       "inferSameAsFirst"> {
  let summary = "ONNX ScatterElements";
  let arguments = (ins Amp_Tensor:$data, Amp_IndexTensor:$indices,
                       Amp_Tensor:$updates,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs Amp_Tensor:$output);
}

def Amp_ScatterNDOp : Amp_PureOp<"ScatterND", "scatter_nd",
                                 "inferSameAsFirst"> {
  let summary = "ONNX ScatterND";
  let arguments = (ins Amp_Tensor:$data, Amp_I64Tensor:$indices,
                       Amp_Tensor:$updates,
                       DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs Amp_Tensor:$output);
}

def Amp_ExpandOp : Amp_PureOp<"Expand", "expand", "inferExpand"> {
  let summary = "ONNX Expand (broadcast to a shape)";
  let arguments = (ins Amp_Tensor:$input, Amp_I64Tensor:$shape);
  let results = (outs Amp_Tensor:$output);
  let hasFolder = 1;
}

def Amp_TileOp : Amp_PureOp<"Tile", "tile", "inferTile"> {
  let summary = "ONNX Tile";
  let arguments = (ins Amp_Tensor:$input, Amp_I64Tensor:$repeats);
  let results = (outs Amp_Tensor:$output);
}

def Amp_PadOp : Amp_PureOp<"Pad", "pad", "inferPad"> {
  let summary = "ONNX Pad";
  let arguments = (ins Amp_Tensor:$data, Amp_I64Tensor:$pads,
                       Amp_OptTensor:$constant_value, Amp_OptIndexTensor:$axes,
                       DefaultValuedStrAttr<StrAttr, "constant">:$mode);
  let results = (outs Amp_Tensor:$output);
}

def Amp_DepthToSpaceOp : Amp_PureOp<"DepthToSpace", "depth_to_space",
    "inferDepthToSpace(ctx, adaptor.getBlocksize(), adaptor.getMode(), "
    "inferred)"> {
  let summary = "ONNX DepthToSpace";
  let arguments = (ins Amp_Tensor:$input, I64Attr:$blocksize,
                       DefaultValuedStrAttr<StrAttr, "DCR">:$mode);
  let results = (outs Amp_Tensor:$output);
}

def Amp_SpaceToDepthOp : Amp_PureOp<"SpaceToDepth", "space_to_depth",
    "inferSpaceToDepth(ctx, adaptor.getBlocksize(), adaptor.getMode(), "
    "inferred)"> {
  let summary = "ONNX SpaceToDepth (mode from opset 28; DCR before)";
  let arguments = (ins Amp_Tensor:$input, I64Attr:$blocksize,
                       DefaultValuedStrAttr<StrAttr, "DCR">:$mode);
  let results = (outs Amp_Tensor:$output);
}

def Amp_ResizeOp : Amp_PureOp<"Resize", "resize",
    "inferResize(ctx, adaptor, inferred)"> {
  let fixedTypeOperands = [1, 2];
  let summary = "ONNX Resize";
  let arguments = (ins Amp_Tensor:$X, Amp_OptTensor:$roi,
                       AnyTypeOf<[RankedTensorOf<[F32]>, NoneType]>:$scales,
                       AnyTypeOf<[Amp_I64Tensor, NoneType]>:$sizes,
                       DefaultValuedAttr<I64Attr, "0">:$antialias,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       DefaultValuedStrAttr<StrAttr, "half_pixel">:
                           $coordinate_transformation_mode,
                       DefaultValuedAttr<F32Attr, "-0.75">:$cubic_coeff_a,
                       DefaultValuedAttr<I64Attr, "0">:$exclude_outside,
                       DefaultValuedAttr<F32Attr, "0.0">:$extrapolation_value,
                       DefaultValuedStrAttr<StrAttr, "stretch">:
                           $keep_aspect_ratio_policy,
                       DefaultValuedStrAttr<StrAttr, "nearest">:$mode,
                       DefaultValuedStrAttr<StrAttr, "round_prefer_floor">:
                           $nearest_mode);
  let results = (outs Amp_Tensor:$Y);
}

def Amp_ConstantOfShapeOp : Amp_PureOp<"ConstantOfShape", "constant_of_shape",
    "inferConstantOfShape(ctx, adaptor.getValueAttr(), inferred)"> {
  let fixedTypeResults = [0];
  let summary = "ONNX ConstantOfShape";
  let arguments = (ins Amp_I64Tensor:$input, OptionalAttr<ElementsAttr>:$value);
  let results = (outs Amp_Tensor:$output);
  let hasFolder = 1;
}

def Amp_RangeOp : Amp_PureOp<"Range", "range",
    "inferRange(ctx, adaptor.getStashType(), inferred)"> {
  let fixedTypeOperands = [0, 1, 2];
  let fixedTypeResults = [0];
  let summary = "ONNX Range (stash_type from opset 27: the type f16/bf16 "
                "ranges compute in)";
  let arguments = (ins Amp_Tensor:$start, Amp_Tensor:$limit,
                       Amp_Tensor:$delta,
                       DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs Amp_Tensor:$output);
  let hasFolder = 1;
}

def Amp_EyeLikeOp : Amp_PureOp<"EyeLike", "eye_like",
    "inferEyeLike(ctx, adaptor.getDtype(), inferred)"> {
  let fixedTypeOperands = [0];
  let fixedTypeResults = [0];
  let summary = "ONNX EyeLike";
  let arguments = (ins Amp_Tensor:$input, OptionalAttr<TypeAttr>:$dtype,
                       DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs Amp_Tensor:$output);
}

def Amp_OneHotOp : Amp_PureOp<"OneHot", "one_hot",
    "inferOneHot(ctx, adaptor.getAxis(), inferred)"> {
  let fixedTypeOperands = [0, 1];
  let summary = "ONNX OneHot";
  let arguments = (ins Amp_Tensor:$indices, Amp_Tensor:$depth,
                       Amp_Tensor:$values,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Amp_Tensor:$output);
}

def Amp_TopKOp : Amp_PureOp<"TopK", "top_k",
    "inferTopK(ctx, adaptor.getAxis(), inferred)"> {
  let summary = "ONNX TopK (values and i64 indices)";
  let arguments = (ins Amp_Tensor:$X, Amp_I64Tensor:$K,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<I64Attr, "1">:$largest,
                       DefaultValuedAttr<I64Attr, "1">:$sorted);
  let results = (outs Amp_Tensor:$Values, Amp_I64Tensor:$Indices);
}

def Amp_NonZeroOp : Amp_PureOp<"NonZero", "non_zero", "inferNonZero"> {
  let anyTypeOperands = [0];
  let summary = "ONNX NonZero (data-dependent result size)";
  let arguments = (ins Amp_Tensor:$X);
  let results = (outs Amp_I64Tensor:$Y);
}

def Amp_NonMaxSuppressionOp : Amp_PureOp<"NonMaxSuppression",
    "non_max_suppression",
    "inferNonMaxSuppression(ctx, adaptor.getCenterPointBox(), inferred)"> {
  let fixedTypeOperands = [0, 1, 2, 3, 4];
  let fixedTypeResults = [0];
  let summary = "ONNX NonMaxSuppression (data-dependent result size; "
                "Semantics/Detection.h)";
  let arguments = (ins RankedTensorOf<[F32]>:$boxes,
                       RankedTensorOf<[F32]>:$scores,
                       AnyTypeOf<[Amp_I64Tensor, NoneType]>:
                           $max_output_boxes_per_class,
                       AnyTypeOf<[RankedTensorOf<[F32]>, NoneType]>:
                           $iou_threshold,
                       AnyTypeOf<[RankedTensorOf<[F32]>, NoneType]>:
                           $score_threshold,
                       DefaultValuedAttr<I64Attr, "0">:$center_point_box);
  let results = (outs Amp_I64Tensor:$selected_indices);
}

def Amp_RoiAlignOp : Amp_PureOp<"RoiAlign", "roi_align",
    "inferRoiAlign(ctx, semantics::RoiAlignAttrs::get(adaptor), inferred)"> {
  let fixedTypeOperands = [2];
  let summary = "ONNX RoiAlign (Semantics/Detection.h)";
  let arguments = (ins Amp_FloatTensor:$X, Amp_FloatTensor:$rois,
                       Amp_I64Tensor:$batch_indices,
                       DefaultValuedStrAttr<StrAttr, "half_pixel">:
                           $coordinate_transformation_mode,
                       DefaultValuedStrAttr<StrAttr, "avg">:$mode,
                       DefaultValuedAttr<I64Attr, "1">:$output_height,
                       DefaultValuedAttr<I64Attr, "1">:$output_width,
                       DefaultValuedAttr<I64Attr, "0">:$sampling_ratio,
                       DefaultValuedAttr<F32Attr, "1.0">:$spatial_scale);
  let results = (outs Amp_FloatTensor:$Y);
}

def Amp_CompressOp : Amp_PureOp<"Compress", "compress",
    "inferCompress(ctx, adaptor.getAxis(), inferred)"> {
  let summary = "ONNX Compress (data-dependent result size)";
  let arguments = (ins Amp_Tensor:$input, Amp_BoolTensor:$condition,
                       OptionalAttr<I64Attr>:$axis);
  let results = (outs Amp_Tensor:$output);
}

def Amp_GridSampleOp : Amp_PureOp<"GridSample", "grid_sample",
                                  "inferGridSample"> {
  let fixedTypeOperands = [1];
  let summary = "ONNX GridSample";
  let arguments = (ins Amp_Tensor:$X, Amp_FloatTensor:$grid,
                       DefaultValuedAttr<I64Attr, "0">:$align_corners,
                       DefaultValuedStrAttr<StrAttr, "linear">:$mode,
                       DefaultValuedStrAttr<StrAttr, "zeros">:$padding_mode);
  let results = (outs Amp_Tensor:$Y);
}

//===----------------------------------------------------------------------===//
// Normalisation, losses and attention added for broader ONNX coverage
//===----------------------------------------------------------------------===//

def Amp_SwishOp : Amp_UnaryOp<"Swish", "swish",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha), Amp_FloatTensor>;

def Amp_RMSNormalizationOp : Amp_PureOp<"RMSNormalization",
    "rms_normalization", "inferSameAsFirst"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX RMSNormalization";
  let arguments = (ins Amp_FloatTensor:$X, Amp_FloatTensor:$scale,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs Amp_FloatTensor:$Y);
}

def Amp_DetOp : Amp_PureOp<"Det", "det", "inferDet"> {
  let summary = "ONNX Det (determinants of the trailing square matrices)";
  let arguments = (ins Amp_FloatTensor:$X);
  let results = (outs Amp_FloatTensor:$Y);
}

def Amp_NegativeLogLikelihoodLossOp : Amp_PureOp<"NegativeLogLikelihoodLoss",
    "negative_log_likelihood_loss",
    "inferLoss(ctx, adaptor.getReduction(), inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX NegativeLogLikelihoodLoss";
  let arguments = (ins Amp_FloatTensor:$input, Amp_IndexTensor:$target,
                       Amp_OptTensor:$weight,
                       OptionalAttr<I64Attr>:$ignore_index,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduction);
  let results = (outs Amp_FloatTensor:$loss);
}

def Amp_SoftmaxCrossEntropyLossOp : Amp_PureOp<"SoftmaxCrossEntropyLoss",
    "softmax_cross_entropy_loss",
    "inferSoftmaxCrossEntropyLoss(ctx, adaptor.getReduction(), inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "ONNX SoftmaxCrossEntropyLoss (loss and log-probabilities)";
  let arguments = (ins Amp_FloatTensor:$scores, Amp_IndexTensor:$labels,
                       Amp_OptTensor:$weights,
                       OptionalAttr<I64Attr>:$ignore_index,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduction);
  let results = (outs Amp_FloatTensor:$output, Amp_FloatTensor:$log_prob);
}

def Amp_AttentionOp : Amp_PureOp<"Attention", "attention",
    "inferAttention(ctx, adaptor.getQNumHeads(), adaptor.getKvNumHeads(), "
    "inferred)"> {
  let fixedTypeOperands = [3];
  let canAccumulateInF32 = 1;
  let summary = "ONNX Attention (scaled dot-product, grouped heads, KV cache)";
  let arguments = (ins Amp_FloatTensor:$Q, Amp_FloatTensor:$K,
                       Amp_FloatTensor:$V, Amp_OptTensor:$attn_mask,
                       Amp_OptTensor:$past_key, Amp_OptTensor:$past_value,
                       Amp_OptTensor:$nonpad_kv_seqlen,
                       DefaultValuedAttr<I64Attr, "0">:$is_causal,
                       OptionalAttr<I64Attr>:$kv_num_heads,
                       DefaultValuedAttr<I64Attr, "-1">:$left_window_size,
                       DefaultValuedAttr<I64Attr, "-1">:$right_window_size,
                       OptionalAttr<I64Attr>:$q_num_heads,
                       DefaultValuedAttr<I64Attr, "0">:$qk_matmul_output_mode,
                       OptionalAttr<F32Attr>:$scale,
                       DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                       OptionalAttr<I64Attr>:$softmax_precision);
  let results = (outs Amp_FloatTensor:$Y, Amp_FloatTensor:$present_key,
                      Amp_FloatTensor:$present_value,
                      Amp_FloatTensor:$qk_matmul_output);
}

//===----------------------------------------------------------------------===//
// Quantisation
//===----------------------------------------------------------------------===//

def Amp_QuantizeLinearOp : Amp_PureOp<"QuantizeLinear", "quantize_linear",
    "inferQuantizeLinear(ctx, semantics::QuantAttrs::get(adaptor), "
    "adaptor.getOutputDtype(), inferred)"> {
  let fixedTypeOperands = [0, 1];
  let fixedTypeResults = [0];
  let summary = "ONNX QuantizeLinear";
  let arguments = (ins Amp_Tensor:$x, Amp_FloatTensor:$y_scale,
                       Amp_OptAnyTensor:$y_zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$block_size,
                       OptionalAttr<TypeAttr>:$output_dtype,
                       DefaultValuedAttr<I64Attr, "1">:$saturate);
  let results = (outs Amp_AnyTensor:$y);
}

def Amp_DequantizeLinearOp : Amp_PureOp<"DequantizeLinear",
    "dequantize_linear",
    "inferDequantizeLinear(ctx, semantics::QuantAttrs::get(adaptor), "
    "adaptor.getOutputDtype(), inferred)"> {
  let fixedTypeOperands = [1];
  let fixedTypeResults = [0];
  let summary = "ONNX DequantizeLinear";
  let arguments = (ins Amp_AnyTensor:$x, Amp_FloatTensor:$x_scale,
                       Amp_OptAnyTensor:$x_zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$block_size,
                       OptionalAttr<TypeAttr>:$output_dtype);
  let results = (outs Amp_FloatTensor:$y);
}

def Amp_DynamicQuantizeLinearOp : Amp_PureOp<"DynamicQuantizeLinear",
    "dynamic_quantize_linear", "inferDynamicQuantizeLinear"> {
  let fixedTypeOperands = [0];
  let fixedTypeResults = [1];
  let summary = "ONNX DynamicQuantizeLinear (uint8, per-tensor)";
  let arguments = (ins RankedTensorOf<[F32]>:$x);
  let results = (outs RankedTensorOf<[UI8]>:$y, RankedTensorOf<[F32]>:$y_scale,
                      RankedTensorOf<[UI8]>:$y_zero_point);
}

// Integer and QLinear ops: 8-bit operands with int32 accumulation
// (Semantics/Quantization.h says where their zero points and scales apply).
// amp.matmul_integer, amp.qlinear_matmul and amp.qlinear_conv are
// decomposed (Decompositions/Quantization.cpp); amp.conv_integer is lowered.

def Amp_MatMulIntegerOp : Amp_PureOp<"MatMulInteger", "matmul_integer",
    "inferMatMulInteger"> {
  let fixedTypeOperands = [0, 1, 2, 3];
  let fixedTypeResults = [0];
  let summary = "ONNX MatMulInteger (int32 result; per-row A and per-column "
                "B zero points)";
  let arguments = (ins Amp_Int8Tensor:$A, Amp_Int8Tensor:$B,
                       Amp_OptInt8Tensor:$a_zero_point,
                       Amp_OptInt8Tensor:$b_zero_point);
  let results = (outs Amp_I32Tensor:$Y);
}

def Amp_ConvIntegerOp : Amp_PureOp<"ConvInteger", "conv_integer",
    "inferConvInteger(ctx, semantics::WindowAttrs::getConv(adaptor), "
    "inferred)"> {
  let fixedTypeOperands = [0, 1, 2, 3];
  let fixedTypeResults = [0];
  let summary = "ONNX ConvInteger (int32 result; per-output-channel W zero "
                "point)";
  let arguments = (ins Amp_Int8Tensor:$x, Amp_Int8Tensor:$w,
                       Amp_OptInt8Tensor:$x_zero_point,
                       Amp_OptInt8Tensor:$w_zero_point,
                       DefaultValuedStrAttr<StrAttr, "NOTSET">:$auto_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Amp_I32Tensor:$y);
}

def Amp_QLinearMatMulOp : Amp_PureOp<"QLinearMatMul", "qlinear_matmul",
    "inferQLinearMatMul"> {
  let fixedTypeOperands = [0, 1, 2, 3, 4, 5, 6, 7];
  let fixedTypeResults = [0];
  let summary = "ONNX QLinearMatMul (int8/uint8; per-row a and per-column b "
                "quantization)";
  let arguments = (ins Amp_Int8Tensor:$a, Amp_FloatTensor:$a_scale,
                       Amp_Int8Tensor:$a_zero_point, Amp_Int8Tensor:$b,
                       Amp_FloatTensor:$b_scale, Amp_Int8Tensor:$b_zero_point,
                       Amp_FloatTensor:$y_scale,
                       Amp_Int8Tensor:$y_zero_point);
  let results = (outs Amp_Int8Tensor:$y);
}

def Amp_QLinearConvOp : Amp_PureOp<"QLinearConv", "qlinear_conv",
    "inferQLinearConv(ctx, semantics::WindowAttrs::getConv(adaptor), "
    "inferred)"> {
  let fixedTypeOperands = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  let fixedTypeResults = [0];
  let summary = "ONNX QLinearConv (int8/uint8; per-output-channel w "
                "quantization; int32 bias)";
  let arguments = (ins Amp_Int8Tensor:$x, Amp_FloatTensor:$x_scale,
                       Amp_Int8Tensor:$x_zero_point, Amp_Int8Tensor:$w,
                       Amp_FloatTensor:$w_scale, Amp_Int8Tensor:$w_zero_point,
                       Amp_FloatTensor:$y_scale,
                       Amp_Int8Tensor:$y_zero_point, Amp_OptI32Tensor:$B,
                       DefaultValuedStrAttr<StrAttr, "NOTSET">:$auto_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Amp_Int8Tensor:$y);
}

//===----------------------------------------------------------------------===//
// Recurrent networks
//===----------------------------------------------------------------------===//

class Amp_RecurrentOp<string onnxName, string mnemonic, string shapeFn,
                      dag extraInputs, dag extraAttrs, dag outputs>
    : Amp_PureOp<onnxName, mnemonic, shapeFn> {
  let summary = "ONNX " # onnxName # " (all outputs, layout 0 or 1)";
  let arguments = !con((ins Amp_FloatTensor:$X, Amp_FloatTensor:$W,
                            Amp_FloatTensor:$R, Amp_OptTensor:$B,
                            AnyTypeOf<[RankedTensorOf<[I32]>, NoneType]>:
                                $sequence_lens,
                            Amp_OptTensor:$initial_h),
                       extraInputs,
                       (ins OptionalAttr<DenseF32ArrayAttr>:$activation_alpha,
                            OptionalAttr<DenseF32ArrayAttr>:$activation_beta,
                            OptionalAttr<StrArrayAttr>:$activations,
                            OptionalAttr<F32Attr>:$clip,
                            DefaultValuedStrAttr<StrAttr, "forward">:$direction,
                            OptionalAttr<I64Attr>:$hidden_size,
                            DefaultValuedAttr<I64Attr, "0">:$layout),
                       extraAttrs);
  let results = outputs;
}

def Amp_RNNOp : Amp_RecurrentOp<"RNN", "rnn",
    "inferRecurrent(ctx, semantics::RecurrentAttrs::getRNN(adaptor), "
    "inferred)", (ins), (ins),
    (outs Amp_FloatTensor:$Y, Amp_FloatTensor:$Y_h)> {
  let canAccumulateInF32 = 1;
}
def Amp_GRUOp : Amp_RecurrentOp<"GRU", "gru",
    "inferRecurrent(ctx, semantics::RecurrentAttrs::getGRU(adaptor), "
    "inferred)", (ins),
    (ins DefaultValuedAttr<I64Attr, "0">:$linear_before_reset),
    (outs Amp_FloatTensor:$Y, Amp_FloatTensor:$Y_h)> {
  let canAccumulateInF32 = 1;
}
def Amp_LSTMOp : Amp_RecurrentOp<"LSTM", "lstm",
    "inferRecurrent(ctx, semantics::RecurrentAttrs::getLSTM(adaptor), "
    "inferred)",
    (ins Amp_OptTensor:$initial_c, Amp_OptTensor:$P),
    (ins DefaultValuedAttr<I64Attr, "0">:$input_forget),
    (outs Amp_FloatTensor:$Y, Amp_FloatTensor:$Y_h, Amp_FloatTensor:$Y_c)> {
  let canAccumulateInF32 = 1;
}

//===----------------------------------------------------------------------===//
// Random generators (not Pure: each evaluation draws new values)
//===----------------------------------------------------------------------===//

class Amp_RandomLikeOp<string onnxName, string mnemonic, dag attrs>
    : Amp_Op<onnxName, mnemonic,
    "inferRandomLike(ctx, adaptor.getDtype(), inferred)"> {
  let summary = "ONNX " # onnxName;
  // The input only gives the shape (and the type when dtype is absent).
  let fixedTypeOperands = [0];
  let fixedTypeResults = [0];
  let arguments = !con((ins Amp_Tensor:$input, OptionalAttr<TypeAttr>:$dtype,
                            OptionalAttr<F32Attr>:$seed), attrs);
  let results = (outs Amp_Tensor:$output);
}
def Amp_RandomUniformLikeOp : Amp_RandomLikeOp<"RandomUniformLike",
    "random_uniform_like",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$high,
         DefaultValuedAttr<F32Attr, "0.0">:$low)>;
def Amp_RandomNormalLikeOp : Amp_RandomLikeOp<"RandomNormalLike",
    "random_normal_like",
    (ins DefaultValuedAttr<F32Attr, "0.0">:$mean,
         DefaultValuedAttr<F32Attr, "1.0">:$scale)>;
def Amp_BernoulliOp : Amp_RandomLikeOp<"Bernoulli", "bernoulli", (ins)>;

def Amp_MaxUnpoolOp : Amp_PureOp<"MaxUnpool", "max_unpool",
    "inferMaxUnpool(ctx, adaptor, inferred)"> {
  let summary = "ONNX MaxUnpool";
  let arguments = (ins Amp_FloatTensor:$X, Amp_I64Tensor:$I,
                       AnyTypeOf<[Amp_I64Tensor, NoneType]>:$output_shape,
                       DenseI64ArrayAttr:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Amp_FloatTensor:$output);
}

//===----------------------------------------------------------------------===//
// Control flow. Bodies are regions that may use values defined above them;
// block arguments are the ONNX subgraph inputs.
//===----------------------------------------------------------------------===//

def Amp_IfOp : Amp_Op<"If", "if", "inferFromRegions",
    [RecursiveMemoryEffects, NoRegionArguments]> {
  let summary = "ONNX If";
  let arguments = (ins Amp_BoolTensor:$cond);
  let results = (outs Variadic<Amp_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$then_branch,
                        SizedRegion<1>:$else_branch);
  let assemblyFormat = [{
    $cond attr-dict `:` type($cond) `->` type($outputs)
    `then` $then_branch `else` $else_branch
  }];
  let hasVerifier = 1;
}

def Amp_LoopOp : Amp_Op<"Loop", "loop", "inferFromRegions",
    [RecursiveMemoryEffects]> {
  let summary = "ONNX Loop";
  let description = [{
    The body's block arguments are (iteration number, condition, loop-carried
    values...); it yields (condition, loop-carried values..., scan outputs...).
    Results are the final loop-carried values followed by the scan outputs
    (stacked along a new leading dimension).
  }];
  let arguments = (ins AnyTypeOf<[Amp_I64Tensor, NoneType]>:$M,
                       AnyTypeOf<[Amp_BoolTensor, NoneType]>:$cond,
                       Variadic<Amp_Tensor>:$v_initial);
  let results = (outs Variadic<Amp_Tensor>:$v_final_and_scan_outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results) $body
  }];
  let hasVerifier = 1;
}

def Amp_ScanOp : Amp_Op<"Scan", "scan",
    "inferScan(ctx, adaptor.getNumScanInputs(), adaptor.getScanOutputAxes(), "
    "inferred)",
    [RecursiveMemoryEffects]> {
  let summary = "ONNX Scan";
  let arguments = (ins Variadic<Amp_Tensor>:$initial_state_and_scan_inputs,
                       I64Attr:$num_scan_inputs,
                       OptionalAttr<DenseI64ArrayAttr>:$scan_input_axes,
                       OptionalAttr<DenseI64ArrayAttr>:$scan_input_directions,
                       OptionalAttr<DenseI64ArrayAttr>:$scan_output_axes,
                       OptionalAttr<DenseI64ArrayAttr>:$scan_output_directions);
  let results = (outs Variadic<Amp_Tensor>:$final_state_and_scan_outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results) $body
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Training (amp-only ops, no ONNX equivalent)
//===----------------------------------------------------------------------===//

def Amp_MultiTensorUnscaleCheckOp : Amp_PureOp<"",
    "multi_tensor_unscale_check", "inferMultiTensorUnscaleCheck"> {
  let summary = "Unscales all gradients and checks them for Inf/NaN at once";
  let description = [{
    The fused step of dynamic loss scaling: every gradient is multiplied by
    `inv_scale` (1 / loss scale), and the op reports whether any unscaled
    element is Inf or NaN (`found_inf`, 1.0 or 0.0, as PyTorch's GradScaler
    keeps it) and, per gradient, whether that tensor had one (`nonfinite`,
    one 0/1 flag per gradient operand, in operand order). It reads each
    gradient once: backends compute the product and the check in the same
    loop (CPU) or multi-tensor kernel (CUDA).
  }];
  let fixedTypeOperands = [0];
  let arguments = (ins Amp_FloatTensor:$inv_scale,
                       Variadic<Amp_FloatTensor>:$grads);
  let results = (outs Variadic<Amp_FloatTensor>:$unscaled,
                      Amp_FloatTensor:$found_inf,
                      Amp_FloatTensor:$nonfinite);
}

def Amp_ConvWeightGradOp : Amp_PureOp<"", "conv_weight_grad",
    "inferConvWeightGrad(ctx, semantics::WindowAttrs::getConv(adaptor), "
    "inferred)"> {
  let canAccumulateInF32 = 1;
  let summary = "The weight gradient of a Conv (backward filter / weights)";
  let description = [{
    dW = d(sum(dY * Conv(X, W)))/dW for the Conv with the same attributes:
    dW[g*M/G + m, c, k] = sum over n, o of
    dY[n, g*M/G + m, o] * Xpad[n, g*C/G + c, o * strides + k * dilations],
    where Xpad is X zero-padded by `pads`. X is (N, C, spatial...), dY is
    the Conv's output gradient (N, M, out spatial...), and dW has the shape
    of the Conv's weights (M, C/group, kernel_shape...). It is what cuDNN
    calls the backward-filter and oneDNN the backward-weights convolution;
    the reverse pass emits it so that backends call those directly instead
    of a convolution over transposed tensors.
  }];
  let arguments = (ins Amp_FloatTensor:$X, Amp_FloatTensor:$dY,
                       DefaultValuedStrAttr<StrAttr, "NOTSET">:$auto_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       DenseI64ArrayAttr:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Amp_FloatTensor:$dW);
}

def Amp_GradientSeedOp : Amp_PureOp<"", "gradient_seed", "inferGradientSeed"> {
  let summary = "The seed of a train step's reverse pass: 1 (rank-0 f32)";
  let description = [{
    d(loss)/d(loss) of the reverse pass that the train-step builder appends:
    the constant 1. amp-loss-scale replaces it by the loss scale, which is
    how the backward pass gets scaled. It is an op rather than a constant so
    that constant folding and CSE cannot merge it with the other 1s of the
    program; backends lower it to the constant 1.
  }];
  let results = (outs Amp_FloatTensor:$seed);
  let assemblyFormat = "attr-dict `:` type($seed)";
}

def Amp_DropoutMaskOp : Amp_PureOp<"", "dropout_mask", "inferDropoutMask"> {
  let summary = "The keep-mask of a training-mode Dropout (Philox4x32-10)";
  let description = [{
    A boolean tensor of `data`'s shape (its values are not read): element
    `i` (row-major linear index) is kept with probability 1 - `ratio`.
    The bits come from the counter-based generator Philox4x32-10
    (Salmon et al., SC'11) with key (lo32(counter), hi32(counter)) and
    counter block (lo32(i), hi32(i), lo32(`stream`), lo32(`seed`)): the first output word
    `w` gives u = (w >> 8) * 2^-24, and the element is kept when
    u >= ratio. `counter` is the train step (or micro-batch) number, so a
    mask is a pure function of the step, the Dropout (`stream`) and the
    position: reruns, resumed runs and other backends draw the same masks.
  }];
  let fixedTypeOperands = [1, 2];
  let anyTypeOperands = [0];
  let arguments = (ins Amp_Tensor:$data, Amp_FloatTensor:$ratio,
                       Amp_I64Tensor:$counter,
                       DefaultValuedAttr<I64Attr, "0">:$stream,
                       DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Amp_BoolTensor:$mask);
}

#endif // AMP_DIALECT_AMP_IR_AMPOPS_TD

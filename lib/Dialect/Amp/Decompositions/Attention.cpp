//===- Attention.cpp - ONNX Attention as matmuls, masks and a softmax -----===//
//
// The graph of ONNX Attention (opsets 23-25), as the operator's reference
// and function body define it:
//
//   Q, K, V (3-d inputs split into heads) ; K, V after the caches (Concat)
//   logits = (Q sqrt(scale)) (K sqrt(scale))^T  (K, V repeated per group)
//   logits = softcap tanh(logits / softcap)      (softcap > 0)
//   bias   = attn_mask (bool: 0 / -inf, padded with -inf to the keys)
//          + causal  (key j <= query i + offset)
//          + window  (offset + i - left <= j <= offset + i + right)
//          + padding (j < nonpad_kv_seqlen[b])
//   P      = Softmax(logits + bias), 0 on rows whose bias is all -inf
//            (their scores are zeroed first: finite gradients)
//   Y      = P V (merged back to 3-d)
//
// where offset is past_key's length, or nonpad_kv_seqlen[b] - q_len with
// an external cache. qk_matmul_output is the logits (modes 0, 1), the
// biased logits (2) or P (3).
//
// Precision: the products use the op's `amp.accumulate`; with it (an
// autocast fp16/bf16 Attention) or with softmax_precision, the softmax
// and everything between the products run in that wider type, as
// FlashAttention-style kernels keep their scores in fp32.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Decompositions/Decompositions.h"
#include "amp/Dialect/Amp/Gradients/GradientBuilder.h"
#include "amp/Dialect/Amp/IR/AmpDecompositionInterface.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"

#include "mlir/IR/DialectRegistry.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::amp;
using gradients::GradientBuilder;
using gradients::tensorType;

namespace {
bool isGiven(Value value) { return value && !isa<NoneType>(value.getType()); }

int64_t dimOf(Value value, int64_t index) {
  return tensorType(value).getDimSize(index);
}

/// The float type of an ONNX TensorProto data type (softmax_precision).
Type floatTypeOfOnnx(MLIRContext *context, int64_t dataType) {
  switch (dataType) {
  case 1:
    return Float32Type::get(context);
  case 10:
    return Float16Type::get(context);
  case 11:
    return Float64Type::get(context);
  case 16:
    return BFloat16Type::get(context);
  default:
    return nullptr;
  }
}

class AttentionGraph {
public:
  AttentionGraph(AttentionOp op, OpBuilder &builder)
      : op(op), gb(builder, op.getLoc()) {
    if (Attribute acc = op->getAttr(kAccumulateAttrName))
      accumulate.push_back(builder.getNamedAttr(kAccumulateAttrName, acc));
  }

  LogicalResult build(SmallVectorImpl<Value> &results);

private:
  /// "node 'name' (Attention): message", at the op.
  LogicalResult error(const Twine &message) {
    InFlightDiagnostic diag = op->emitError();
    if (StringRef node = getNodeName(op.getLoc()); !node.empty())
      diag << "node '" << node << "' ";
    return diag << "(Attention): " << message;
  }
  /// (B, S, H*D) -> (B, H, S, D).
  Value splitHeads(Value x, int64_t heads) {
    int64_t hidden = dimOf(x, 2);
    int64_t head = ShapedType::isDynamic(hidden) ? -1 : hidden / heads;
    Value split = gb.create<ReshapeOp>({x, gb.i64s({0, 0, heads, head})});
    return gb.transpose(split, {0, 2, 1, 3});
  }
  /// (B, Hkv, S, D) -> (B, Hkv * group, S, D), each head repeated in place.
  Value repeatHeads(Value x, int64_t group) {
    Value unsqueezed = gb.create<UnsqueezeOp>({x, gb.i64s({2})});
    Value expanded =
        gb.create<ExpandOp>({unsqueezed, gb.i64s({1, 1, group, 1, 1})});
    return gb.create<ReshapeOp>(
        {expanded, gb.i64s({0, dimOf(x, 1) * group, -1, dimOf(x, 3)})});
  }
  /// 0 where `allowed`, -inf elsewhere, in the score type.
  Value additive(Value allowed) {
    return gb.create<WhereOp>({allowed, gb.scalar(scoreType, 0.0),
                               gb.scalar(scoreType, -kInf)});
  }
  /// A (q, kv) bool constant.
  Value allowedConstant(function_ref<bool(int64_t, int64_t)> allowed) {
    SmallVector<bool> values;
    values.reserve(qLen * totalLen);
    for (int64_t i = 0; i < qLen; ++i) {
      bool any = false;
      for (int64_t j = 0; j < totalLen; ++j) {
        values.push_back(allowed(i, j));
        any |= values.back();
      }
      mayMaskRows |= !any;
    }
    auto type = RankedTensorType::get({qLen, totalLen},
                                      gb.getBuilder().getI1Type());
    return gb.constant(DenseElementsAttr::get(type, values));
  }
  /// A (q, kv) i64 constant.
  Value indexConstant(function_ref<int64_t(int64_t, int64_t)> value) {
    SmallVector<int64_t> values;
    values.reserve(qLen * totalLen);
    for (int64_t i = 0; i < qLen; ++i)
      for (int64_t j = 0; j < totalLen; ++j)
        values.push_back(value(i, j));
    auto type = RankedTensorType::get({qLen, totalLen},
                                      gb.getBuilder().getI64Type());
    return gb.constant(DenseElementsAttr::get(type, ArrayRef(values)));
  }
  Value addBias(Value bias, Value term) {
    return bias ? gb.add(bias, term) : term;
  }
  Value maskBias();
  LogicalResult structuralBias(Value &bias);

  static constexpr double kInf = std::numeric_limits<double>::infinity();

  AttentionOp op;
  GradientBuilder gb;
  SmallVector<NamedAttribute> accumulate;
  Type scoreType;
  int64_t qLen = 0, totalLen = 0, pastLen = 0;
  /// nonpad_kv_seqlen as (B, 1, 1, 1) i64, when given.
  Value nonpad;
  /// Whether the bias may mask a whole row (not known at compile time, or
  /// a constant row without an attendable key).
  bool mayMaskRows = false;
};

/// attn_mask as an additive bias over all the keys.
Value AttentionGraph::maskBias() {
  Value mask = op.getAttnMask();
  Value bias = tensorType(mask).getElementType().isInteger(1)
                   ? additive(mask)
                   : gb.castTo(mask, scoreType);
  if (!bias)
    return nullptr;
  // A mask shorter than the keys (the past) leaves the rest masked.
  RankedTensorType type = tensorType(bias);
  int64_t rank = type.getRank(), maskLen = type.getDimSize(rank - 1);
  if (ShapedType::isDynamic(maskLen) || ShapedType::isDynamic(totalLen) ||
      maskLen >= totalLen)
    return bias;
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[2 * rank - 1] = totalLen - maskLen;
  return gb.create<PadOp>(
      {bias, gb.i64s(pads), gb.scalar(scoreType, -kInf), gb.none()});
}

/// The causal, sliding-window and padding terms.
LogicalResult AttentionGraph::structuralBias(Value &bias) {
  int64_t left = op.getLeftWindowSize(), right = op.getRightWindowSize();
  bool causal = op.getIsCausal() != 0, window = left >= 0 || right >= 0;
  if (left < -1 || right < -1)
    return error("left_window_size and right_window_size must be -1 or "
                 "nonnegative");
  if ((causal || window) &&
      (ShapedType::isDynamic(qLen) || ShapedType::isDynamic(totalLen)))
    return error("is_causal and the window sizes need static query and key "
                 "sequence lengths to be decomposed");
  // Whether key j is inside the window of query i at offset `offset`.
  auto inWindow = [&](int64_t i, int64_t j, int64_t offset) {
    int64_t diff = i + offset - j;
    return (left < 0 || diff <= left) && (right < 0 || -diff <= right);
  };
  if (!nonpad) {
    // The frontier is the same for every batch: one constant.
    if (causal)
      bias = addBias(bias, additive(allowedConstant([&](int64_t i, int64_t j) {
                       return j <= i + pastLen;
                     })));
    if (window)
      bias = addBias(bias, additive(allowedConstant([&](int64_t i, int64_t j) {
                       return inWindow(i, j, pastLen);
                     })));
    return success();
  }
  // An external cache: offset[b] = nonpad[b] - q_len, compared at run time
  // (each condition rewritten as a comparison of nonpad with a constant).
  if (causal) // j <= i + n - q  <=>  j - i + q <= n
    bias = addBias(bias, additive(gb.create<LessOrEqualOp>(
                             {indexConstant([&](int64_t i, int64_t j) {
                                return j - i + qLen;
                              }),
                              nonpad})));
  if (window) {
    Value allowed;
    if (left >= 0) // i + n - q - j <= left  <=>  n <= left + j + q - i
      allowed = gb.create<LessOrEqualOp>(
          {nonpad, indexConstant([&](int64_t i, int64_t j) {
             return left + j + qLen - i;
           })});
    if (right >= 0) { // j - (i + n - q) <= right  <=>  n >= j + q - i - right
      Value r = gb.create<GreaterOrEqualOp>(
          {nonpad, indexConstant([&](int64_t i, int64_t j) {
             return j + qLen - i - right;
           })});
      allowed = allowed ? gb.create<AndOp>({allowed, r}) : r;
    }
    bias = addBias(bias, additive(allowed));
  }
  // Keys beyond each batch's valid length.
  if (ShapedType::isDynamic(totalLen))
    return error("nonpad_kv_seqlen needs a static key sequence length to be "
                 "decomposed");
  SmallVector<int64_t> keys(totalLen);
  for (int64_t j = 0; j < totalLen; ++j)
    keys[j] = j;
  bias = addBias(bias, additive(gb.create<LessOp>({gb.i64s(keys), nonpad})));
  return success();
}

LogicalResult AttentionGraph::build(SmallVectorImpl<Value> &results) {
  Value q = op.getQ(), k = op.getK(), v = op.getV();
  Type inputType = tensorType(q).getElementType();
  MLIRContext *context = op.getContext();
  if (tensorType(q).getRank() == 3) {
    std::optional<int64_t> qHeads = op.getQNumHeads(),
                           kvHeads = op.getKvNumHeads();
    if (!qHeads || !kvHeads || *qHeads <= 0 || *kvHeads <= 0)
      return error("3-d inputs need q_num_heads and kv_num_heads");
    q = splitHeads(q, *qHeads);
    k = splitHeads(k, *kvHeads);
    v = splitHeads(v, *kvHeads);
  }
  if (!q || !k || !v)
    return failure();

  // Caches: the keys and values are the past ones followed by the new ones.
  Value pastKey = op.getPastKey(), pastValue = op.getPastValue();
  if (isGiven(pastKey) != isGiven(pastValue))
    return error("past_key and past_value must be given together");
  if (isGiven(pastKey)) {
    if (isGiven(op.getNonpadKvSeqlen()))
      return error("nonpad_kv_seqlen cannot be combined with past_key");
    k = gb.create<ConcatOp>({pastKey, k}, {gb.attr("axis", int64_t(2))});
    v = gb.create<ConcatOp>({pastValue, v}, {gb.attr("axis", int64_t(2))});
    if (!k || !v)
      return failure();
    pastLen = dimOf(pastKey, 2);
    if (ShapedType::isDynamic(pastLen) && op.getIsCausal())
      return error("is_causal with a past of dynamic length cannot be "
                   "decomposed");
  }
  Value presentKey = k, presentValue = v;
  qLen = dimOf(q, 2);
  totalLen = dimOf(k, 2);

  // Grouped-query attention: each key/value head serves `group` query
  // heads in a row.
  int64_t qHeads = dimOf(q, 1), kvHeads = dimOf(k, 1);
  if (ShapedType::isDynamic(qHeads) || ShapedType::isDynamic(kvHeads))
    return error("the number of heads must be static to be decomposed");
  if (qHeads != kvHeads) {
    if (qHeads % kvHeads != 0 || dimOf(v, 1) != kvHeads)
      return error("the query heads (" + Twine(qHeads) +
                   ") must be a multiple of the key/value heads (" +
                   Twine(kvHeads) + ")");
    if (ShapedType::isDynamic(dimOf(k, 3)) ||
        ShapedType::isDynamic(dimOf(v, 3)))
      return error("grouped-query attention needs static head sizes to be "
                   "decomposed");
    k = repeatHeads(k, qHeads / kvHeads);
    v = repeatHeads(v, qHeads / kvHeads);
  }

  // The score type: softmax_precision, else fp32 under amp.accumulate.
  scoreType = inputType;
  if (std::optional<int64_t> precision = op.getSoftmaxPrecision()) {
    scoreType = floatTypeOfOnnx(context, *precision);
    if (!scoreType)
      return error("softmax_precision " + Twine(*precision) +
                   " is not a float type");
  } else if (!accumulate.empty()) {
    scoreType = Float32Type::get(context);
  }

  // Scaled products: sqrt(scale) on each side, rounded to the input type.
  double scale;
  if (std::optional<APFloat> given = op.getScale()) {
    scale = given->convertToDouble();
  } else {
    int64_t headSize = dimOf(q, 3);
    if (ShapedType::isDynamic(headSize))
      return error("without a scale, the head size must be static");
    scale = 1.0 / std::sqrt(static_cast<double>(headSize));
  }
  Value rootScale = gb.scalar(inputType, std::sqrt(scale));
  Value keysT = gb.transpose(gb.mul(k, rootScale), {0, 1, 3, 2});
  Value logits = gb.castTo(
      gb.create<MatMulOp>({gb.mul(q, rootScale), keysT}, accumulate),
      scoreType);
  double softcap = op.getSoftcap().convertToDouble();
  if (softcap > 0) {
    Value cap = gb.scalar(scoreType, softcap);
    logits = gb.mul(gb.create<TanhOp>({gb.div(logits, cap)}), cap);
  }

  // The additive bias.
  if (Value seqlens = op.getNonpadKvSeqlen(); isGiven(seqlens))
    nonpad = gb.create<ReshapeOp>(
        {gb.castTo(seqlens, gb.getBuilder().getI64Type()),
         gb.i64s({-1, 1, 1, 1})});
  Value bias = isGiven(op.getAttnMask()) ? maskBias() : Value();
  mayMaskRows = isGiven(op.getAttnMask()) || nonpad;
  if (failed(structuralBias(bias)))
    return failure();
  Value biased = bias ? gb.add(logits, bias) : logits;

  Value probs;
  if (mayMaskRows) {
    // Rows without an attendable key give 0, not NaN (decided on the bias,
    // as the function body does). Their scores are zeroed before the
    // softmax too, so that its gradient stays finite (0) there.
    Value rowMax = gb.create<ReduceMaxOp>({bias, gb.i64s({-1})},
                                          {gb.attr("keepdims", int64_t(1))});
    Value empty = gb.create<EqualOp>({rowMax, gb.scalar(scoreType, -kInf)});
    Value zero = gb.scalar(scoreType, 0.0);
    Value safe = gb.create<WhereOp>({empty, zero, biased});
    probs = gb.create<WhereOp>(
        {empty, zero,
         gb.create<SoftmaxOp>({safe}, {gb.attr("axis", int64_t(-1))})});
  } else {
    probs = gb.create<SoftmaxOp>({biased}, {gb.attr("axis", int64_t(-1))});
  }
  Value y = gb.create<MatMulOp>({gb.castTo(probs, inputType), v}, accumulate);
  if (tensorType(op.getQ()).getRank() == 3 && y) {
    int64_t valueSize = dimOf(y, 3);
    int64_t merged =
        ShapedType::isDynamic(valueSize) ? -1 : qHeads * valueSize;
    y = gb.create<ReshapeOp>(
        {gb.transpose(y, {0, 2, 1, 3}), gb.i64s({0, 0, merged})});
  }

  Value qk;
  switch (op.getQkMatmulOutputMode()) {
  case 0:
  case 1:
    qk = logits;
    break;
  case 2:
    qk = biased;
    break;
  case 3:
    qk = probs;
    break;
  default:
    return error("qk_matmul_output_mode must be 0, 1, 2 or 3");
  }
  qk = gb.castTo(qk, inputType);
  if (gb.hasFailed() || !y || !qk)
    return failure();
  results.assign({y, presentKey, presentValue, qk});
  return success();
}

struct AttentionDecomposition
    : public DecomposableOpInterface::ExternalModel<AttentionDecomposition,
                                                    AttentionOp> {
  LogicalResult decompose(Operation *op, OpBuilder &builder,
                          SmallVectorImpl<Value> &results) const {
    return AttentionGraph(cast<AttentionOp>(op), builder).build(results);
  }
};
} // namespace

void mlir::amp::registerAmpDecompositions(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, AmpDialect *) {
    AttentionOp::attachInterface<AttentionDecomposition>(*context);
  });
  registerAmpQuantizationDecompositions(registry);
}

//===- Recurrent.h - RNN, GRU and LSTM --------------------------*- C++ -*-===//
//
// The operand conventions of ONNX's recurrent ops: gate counts and order,
// the shapes every operand must have for a direction count and hidden
// size, the layouts (0: time-major, 1: batch-major), and the activation
// functions with their defaults and alpha/beta values. Shape inference
// checks operands with these; the linalg lowering builds its loops from
// them.
//
// Gate order in W, R and B (per direction): RNN [i]; GRU [z, r, h];
// LSTM [i, o, f, c]; LSTM's peepholes P are [i, o, f]. B holds the W biases
// then the R biases ([num_directions, 2 * gates * hidden]).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_RECURRENT_H
#define AMP_DIALECT_AMP_SEMANTICS_RECURRENT_H

#include "amp/Dialect/Amp/Semantics/Common.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::amp::semantics {

enum class RecurrentKind { RNN, GRU, LSTM };

/// Gates per direction: RNN 1, GRU 3, LSTM 4.
int64_t getGateCount(RecurrentKind kind);
/// Activation functions per direction: RNN 1 (f), GRU 2 (f, g), LSTM 3
/// (f, g, h).
int64_t getActivationCount(RecurrentKind kind);

enum class ActivationKind {
  Relu,
  Tanh,
  Sigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

/// One activation function with its alpha and beta (0 where unused).
struct Activation {
  ActivationKind kind;
  double alpha = 0, beta = 0;
};

/// The attributes of RNN, GRU and LSTM as written on the op.
struct RecurrentAttrs {
  RecurrentKind kind = RecurrentKind::RNN;
  StringRef direction = "forward";
  std::optional<int64_t> hiddenSize;
  int64_t layout = 0;
  std::optional<double> clip;
  /// Empty: the op's defaults.
  SmallVector<StringRef> activations;
  SmallVector<double> alphas, betas;
  /// GRU only.
  bool linearBeforeReset = false;
  /// LSTM only.
  bool inputForget = false;

  template <typename RecurrentLike>
  static RecurrentAttrs getCommon(RecurrentKind kind, RecurrentLike op) {
    RecurrentAttrs attrs;
    attrs.kind = kind;
    attrs.direction = op.getDirection();
    if (auto hidden = op.getHiddenSize())
      attrs.hiddenSize = static_cast<int64_t>(*hidden);
    attrs.layout = static_cast<int64_t>(op.getLayout());
    if (auto clip = op.getClip())
      attrs.clip = clip->convertToDouble();
    if (auto names = op.getActivations())
      for (Attribute name : *names)
        attrs.activations.push_back(cast<StringAttr>(name).getValue());
    if (auto alphas = op.getActivationAlpha())
      attrs.alphas.assign(alphas->begin(), alphas->end());
    if (auto betas = op.getActivationBeta())
      attrs.betas.assign(betas->begin(), betas->end());
    return attrs;
  }
  /// RNN (op or adaptor).
  template <typename RNNLike> static RecurrentAttrs getRNN(RNNLike op) {
    return getCommon(RecurrentKind::RNN, op);
  }
  /// GRU (op or adaptor).
  template <typename GRULike> static RecurrentAttrs getGRU(GRULike op) {
    RecurrentAttrs attrs = getCommon(RecurrentKind::GRU, op);
    attrs.linearBeforeReset = op.getLinearBeforeReset() != 0;
    return attrs;
  }
  /// LSTM (op or adaptor).
  template <typename LSTMLike> static RecurrentAttrs getLSTM(LSTMLike op) {
    RecurrentAttrs attrs = getCommon(RecurrentKind::LSTM, op);
    attrs.inputForget = op.getInputForget() != 0;
    return attrs;
  }
};

/// The shapes of the operands; std::nullopt for an absent optional one.
/// Operand order: X, W, R, B, sequence_lens, initial_h, (LSTM) initial_c, P.
struct RecurrentShapes {
  ArrayRef<int64_t> x, w, r;
  std::optional<ArrayRef<int64_t>> b, sequenceLens, initialH, initialC, p;
};

struct RecurrentDims {
  int64_t directions, seqLength, batch, inputSize, hidden;
  bool batchMajor;
  /// Y: [seq, dirs, batch, hidden] (layout 0) or [batch, seq, dirs, hidden].
  SmallVector<int64_t> getYShape() const;
  /// Y_h, Y_c, initial_h, initial_c: [dirs, batch, hidden] (layout 0) or
  /// [batch, dirs, hidden].
  SmallVector<int64_t> getStateShape() const;
};

/// 1 for "forward" and "reverse", 2 for "bidirectional", std::nullopt for
/// anything else.
std::optional<int64_t> getDirectionCount(StringRef direction);

/// Checks every operand's rank and sizes against the direction count, the
/// gate count and the hidden size (hidden_size, else R's last dimension)
/// and the attributes' values; dynamic sizes pass.
FailureOr<RecurrentDims> resolveRecurrentDims(const RecurrentAttrs &attrs,
                                              const RecurrentShapes &shapes,
                                              ErrorFn error);

/// The activation functions of every direction, direction-major
/// (directions * getActivationCount entries). Without `activations`: RNN
/// Tanh; GRU Sigmoid, Tanh; LSTM Sigmoid, Tanh, Tanh (each direction). A
/// given list names every direction's functions (as ONNX and onnxruntime
/// require). Names match case-insensitively (as onnxruntime). alpha and beta
/// values are consumed in order by the functions that take them (Affine,
/// LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu: onnxruntime's
/// rule); a function left without one takes its ONNX operator's default
/// (LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid 0.2 and 0.5, Elu 1,
/// Affine 1 and 0, ScaledTanh 1 and 1).
FailureOr<SmallVector<Activation>>
resolveActivations(const RecurrentAttrs &attrs, int64_t directions,
                   ErrorFn error);

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_RECURRENT_H

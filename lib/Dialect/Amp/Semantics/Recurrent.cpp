//===- Recurrent.cpp - RNN, GRU and LSTM ----------------------------------===//

#include "amp/Dialect/Amp/Semantics/Recurrent.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp::semantics;

int64_t mlir::amp::semantics::getGateCount(RecurrentKind kind) {
  switch (kind) {
  case RecurrentKind::RNN:
    return 1;
  case RecurrentKind::GRU:
    return 3;
  case RecurrentKind::LSTM:
    return 4;
  }
  llvm_unreachable("unknown recurrent kind");
}

int64_t mlir::amp::semantics::getActivationCount(RecurrentKind kind) {
  switch (kind) {
  case RecurrentKind::RNN:
    return 1;
  case RecurrentKind::GRU:
    return 2;
  case RecurrentKind::LSTM:
    return 3;
  }
  llvm_unreachable("unknown recurrent kind");
}

std::optional<int64_t>
mlir::amp::semantics::getDirectionCount(StringRef direction) {
  if (direction == "forward" || direction == "reverse")
    return 1;
  if (direction == "bidirectional")
    return 2;
  return std::nullopt;
}

SmallVector<int64_t> RecurrentDims::getYShape() const {
  if (batchMajor)
    return {batch, seqLength, directions, hidden};
  return {seqLength, directions, batch, hidden};
}

SmallVector<int64_t> RecurrentDims::getStateShape() const {
  if (batchMajor)
    return {batch, directions, hidden};
  return {directions, batch, hidden};
}

namespace {

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (i)
      text += ", ";
    text += ShapedType::isDynamic(size) ? "?" : std::to_string(size);
  }
  return text + "]";
}

/// Compares an operand's shape with the expected one (kDynamic in either
/// passes): "W must be [num_directions, 4*hidden_size, input_size] =
/// [1, 16, 3], not [1, 12, 3]".
LogicalResult checkShape(StringRef name, ArrayRef<int64_t> shape,
                         ArrayRef<int64_t> expected, StringRef formula,
                         ErrorFn error) {
  bool matches = shape.size() == expected.size();
  for (size_t d = 0; matches && d < shape.size(); ++d)
    matches = ShapedType::isDynamic(shape[d]) ||
              ShapedType::isDynamic(expected[d]) || shape[d] == expected[d];
  if (matches)
    return success();
  error(name + " must be " + formula + " = " + formatShape(expected) +
        ", not " + formatShape(shape));
  return failure();
}

} // namespace

FailureOr<RecurrentDims> mlir::amp::semantics::resolveRecurrentDims(
    const RecurrentAttrs &attrs, const RecurrentShapes &shapes, ErrorFn error) {
  std::optional<int64_t> directions = getDirectionCount(attrs.direction);
  if (!directions) {
    error("unknown direction '" + attrs.direction +
          "' (forward, reverse or bidirectional)");
    return failure();
  }
  if (attrs.layout != 0 && attrs.layout != 1) {
    error("layout must be 0 or 1, not " + Twine(attrs.layout));
    return failure();
  }
  if (attrs.hiddenSize && *attrs.hiddenSize <= 0) {
    error("hidden_size must be positive, not " + Twine(*attrs.hiddenSize));
    return failure();
  }
  if (attrs.clip && !(*attrs.clip > 0)) {
    error("clip must be positive, not " + Twine(std::to_string(*attrs.clip)));
    return failure();
  }
  if (shapes.x.size() != 3 || shapes.w.size() != 3 || shapes.r.size() != 3) {
    error("X, W and R must have rank 3 (got " + Twine(shapes.x.size()) + ", " +
          Twine(shapes.w.size()) + ", " + Twine(shapes.r.size()) + ")");
    return failure();
  }
  RecurrentDims dims;
  dims.directions = *directions;
  dims.batchMajor = attrs.layout == 1;
  dims.seqLength = shapes.x[dims.batchMajor ? 1 : 0];
  dims.batch = shapes.x[dims.batchMajor ? 0 : 1];
  dims.inputSize = shapes.x[2];
  dims.hidden = attrs.hiddenSize.value_or(shapes.r[2]);
  if (ShapedType::isDynamic(dims.batch) && shapes.sequenceLens &&
      shapes.sequenceLens->size() == 1)
    dims.batch = (*shapes.sequenceLens)[0];

  int64_t gates = getGateCount(attrs.kind);
  int64_t gateRows = mulDims(gates, dims.hidden);
  std::string g = std::to_string(gates);
  if (failed(checkShape(
          "W", shapes.w, {dims.directions, gateRows, dims.inputSize},
          "[num_directions, " + g + "*hidden_size, input_size]", error)) ||
      failed(checkShape("R", shapes.r, {dims.directions, gateRows, dims.hidden},
                        "[num_directions, " + g + "*hidden_size, hidden_size]",
                        error)))
    return failure();
  if (shapes.b &&
      failed(checkShape("B", *shapes.b, {dims.directions, mulDims(2, gateRows)},
                        "[num_directions, " + std::to_string(2 * gates) +
                            "*hidden_size]",
                        error)))
    return failure();
  if (shapes.sequenceLens &&
      failed(checkShape("sequence_lens", *shapes.sequenceLens, {dims.batch},
                        "[batch_size]", error)))
    return failure();
  // The state operands also give the batch when X's is dynamic.
  for (const auto &state : {shapes.initialH, shapes.initialC})
    if (state && state->size() == 3 && ShapedType::isDynamic(dims.batch))
      dims.batch = (*state)[dims.batchMajor ? 0 : 1];
  SmallVector<int64_t> stateShape = dims.getStateShape();
  StringRef stateFormula = dims.batchMajor
                               ? "[batch_size, num_directions, hidden_size]"
                               : "[num_directions, batch_size, hidden_size]";
  if (shapes.initialH && failed(checkShape("initial_h", *shapes.initialH,
                                           stateShape, stateFormula, error)))
    return failure();
  if (shapes.initialC && failed(checkShape("initial_c", *shapes.initialC,
                                           stateShape, stateFormula, error)))
    return failure();
  if (shapes.p && failed(checkShape("P", *shapes.p,
                                    {dims.directions, mulDims(3, dims.hidden)},
                                    "[num_directions, 3*hidden_size]", error)))
    return failure();
  return dims;
}

namespace {

struct ActivationInfo {
  ActivationKind kind;
  bool takesAlpha, takesBeta;
  double alpha, beta;
};

std::optional<ActivationInfo> lookUpActivation(StringRef name) {
  using K = ActivationKind;
  return llvm::StringSwitch<std::optional<ActivationInfo>>(name.lower())
      .Case("relu", ActivationInfo{K::Relu, false, false, 0, 0})
      .Case("tanh", ActivationInfo{K::Tanh, false, false, 0, 0})
      .Case("sigmoid", ActivationInfo{K::Sigmoid, false, false, 0, 0})
      .Case("affine", ActivationInfo{K::Affine, true, true, 1.0, 0.0})
      .Case("leakyrelu", ActivationInfo{K::LeakyRelu, true, false, 0.01, 0})
      .Case("thresholdedrelu",
            ActivationInfo{K::ThresholdedRelu, true, false, 1.0, 0})
      .Case("scaledtanh", ActivationInfo{K::ScaledTanh, true, true, 1.0, 1.0})
      .Case("hardsigmoid", ActivationInfo{K::HardSigmoid, true, true, 0.2, 0.5})
      .Case("elu", ActivationInfo{K::Elu, true, false, 1.0, 0})
      .Case("softsign", ActivationInfo{K::Softsign, false, false, 0, 0})
      .Case("softplus", ActivationInfo{K::Softplus, false, false, 0, 0})
      .Default(std::nullopt);
}

} // namespace

FailureOr<SmallVector<Activation>>
mlir::amp::semantics::resolveActivations(const RecurrentAttrs &attrs,
                                         int64_t directions, ErrorFn error) {
  int64_t count = getActivationCount(attrs.kind);
  SmallVector<StringRef> names(attrs.activations);
  if (names.empty()) {
    switch (attrs.kind) {
    case RecurrentKind::RNN:
      names = {"Tanh"};
      break;
    case RecurrentKind::GRU:
      names = {"Sigmoid", "Tanh"};
      break;
    case RecurrentKind::LSTM:
      names = {"Sigmoid", "Tanh", "Tanh"};
      break;
    }
  }
  int64_t given = static_cast<int64_t>(names.size());
  if (!attrs.activations.empty() && given != count * directions) {
    error("activations has " + Twine(given) + " entries; expected " +
          Twine(count * directions) + " (" + Twine(count) + " per direction)");
    return failure();
  }
  SmallVector<Activation> result;
  size_t nextAlpha = 0, nextBeta = 0;
  for (StringRef name : names) {
    std::optional<ActivationInfo> info = lookUpActivation(name);
    if (!info) {
      error("unknown activation '" + name +
            "' (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
            "ScaledTanh, HardSigmoid, Elu, Softsign or Softplus)");
      return failure();
    }
    Activation activation{info->kind, 0, 0};
    if (info->takesAlpha)
      activation.alpha = nextAlpha < attrs.alphas.size()
                             ? attrs.alphas[nextAlpha++]
                             : info->alpha;
    if (info->takesBeta)
      activation.beta =
          nextBeta < attrs.betas.size() ? attrs.betas[nextBeta++] : info->beta;
    result.push_back(activation);
  }
  if (attrs.activations.empty() && directions == 2)
    result.append(SmallVector<Activation>(result));
  return result;
}

//===- ONNXVersionRules.cpp - ONNX operator versions, both ways -----------===//
//
// One table of version rules serves the importer (upgrade) and the writer
// (downgrade); see ONNXVersionRules.h. Typical rules move an attribute into
// a constant input (Reduce* axes before 18, Squeeze and Split before 13) or
// rebuild old semantics (Softmax before 13). docs/OnnxExportVersions.md
// lists what each opset can express.
//
//===----------------------------------------------------------------------===//

#include "ONNXVersionRules.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Dialect/Amp/Semantics/Indexing.h"
#include "amp/Target/ONNX/ONNXImporter.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::onnx_versions;
using onnx_import::NodeContext;
using onnx_import::PendingOp;

//===----------------------------------------------------------------------===//
// Writer helpers
//===----------------------------------------------------------------------===//

void onnx_versions::addIntsAttribute(onnx::NodeProto &node, StringRef name,
                                     ArrayRef<int64_t> values) {
  auto *attr = node.add_attribute();
  attr->set_name(name.str());
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values)
    attr->add_ints(value);
}

void onnx_versions::removeAttribute(onnx::NodeProto &node, StringRef name) {
  auto *attrs = node.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i)
    if (attrs->Get(i).name() == name) {
      attrs->DeleteSubrange(i, 1);
      return;
    }
}

const onnx::AttributeProto *
onnx_versions::findAttribute(const onnx::NodeProto &node, StringRef name) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Attributes that became inputs
//===----------------------------------------------------------------------===//

/// Import: moves an INTS attribute into a constant i64 input at
/// `operandIndex`. An attribute of another kind is an error (dropping it
/// would change the meaning: a Reduce without axes reduces everything).
static LogicalResult attributeToInput(PendingOp &op, const NodeContext &ctx,
                                      OpBuilder &builder, StringRef name,
                                      unsigned operandIndex) {
  Attribute attr = op.takeAttr(name);
  if (!attr)
    return success();
  auto values = dyn_cast<DenseI64ArrayAttr>(attr);
  if (!values)
    return ctx.fail("attribute '" + name +
                    "' must be a list of integers (INTS)");
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder.getI64Type());
  Value constant = builder.create<ConstantOp>(
      ctx.loc, DenseElementsAttr::get(type, values.asArrayRef()));
  if (op.operands.size() <= operandIndex)
    op.operands.resize(operandIndex + 1, nullptr);
  op.operands[operandIndex] = constant;
  return success();
}

/// Export: the constant input back into an INTS attribute.
static LogicalResult inputToAttribute(NodeWriter &w, StringRef name,
                                      unsigned index) {
  auto values = w.takeConstantInput(index, name);
  if (failed(values))
    return failure();
  if (!values->empty())
    addIntsAttribute(w.node, name, *values);
  return success();
}

static LogicalResult upgradeAxes(PendingOp &op, const NodeContext &ctx,
                                 OpBuilder &b) {
  return attributeToInput(op, ctx, b, "axes", 1);
}
static LogicalResult downgradeAxes(NodeWriter &w) {
  return inputToAttribute(w, "axes", 1);
}

static LogicalResult downgradeReduceAxes(NodeWriter &w) {
  if (failed(inputToAttribute(w, "axes", 1)))
    return failure();
  if (const auto *noop = findAttribute(w.node, "noop_with_empty_axes")) {
    if (noop->i() != 0)
      return w.op->emitError() << "cannot export: noop_with_empty_axes needs "
                                  "opset 18";
    removeAttribute(w.node, "noop_with_empty_axes");
  }
  return success();
}

static LogicalResult upgradeSplitSizes(PendingOp &op, const NodeContext &ctx,
                                       OpBuilder &b) {
  return attributeToInput(op, ctx, b, "split", 1);
}
static LogicalResult downgradeSplitSizes(NodeWriter &w) {
  return inputToAttribute(w, "split", 1);
}

/// amp's Split always carries num_outputs (from opset 18 ONNX has it, but
/// only without the sizes input).
static LogicalResult upgradeSplitCount(PendingOp &op, const NodeContext &,
                                       OpBuilder &b) {
  if (!op.getAttr("num_outputs"))
    op.setAttr(b, "num_outputs", b.getI64IntegerAttr(op.numOutputs));
  return success();
}
static LogicalResult downgradeSplitCount(NodeWriter &w) {
  bool hasSizes = w.node.input_size() > 1 && !w.node.input(1).empty();
  if (w.opset < 18 || hasSizes)
    removeAttribute(w.node, "num_outputs");
  return success();
}

static LogicalResult upgradeDropoutRatio(PendingOp &op, const NodeContext &ctx,
                                         OpBuilder &b) {
  Attribute attr = op.takeAttr("ratio");
  if (attr && !isa<FloatAttr>(attr))
    return ctx.fail("attribute 'ratio' must be a float (FLOAT)");
  if (auto ratio = dyn_cast_or_null<FloatAttr>(attr)) {
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Value constant = b.create<ConstantOp>(
        ctx.loc, DenseElementsAttr::get(scalar, ratio.getValue()));
    op.operands.resize(std::max<size_t>(op.operands.size(), 2), nullptr);
    op.operands[1] = constant;
  }
  return success();
}
static LogicalResult downgradeDropoutRatio(NodeWriter &w) {
  onnx::NodeProto &node = w.node;
  if (node.input_size() > 2 && !node.input(2).empty())
    return w.op->emitError() << "cannot export: training_mode needs opset 12";
  if (node.input_size() > 1 && !node.input(1).empty()) {
    DenseFPElementsAttr ratio;
    if (!matchPattern(w.op->getOperand(1), m_Constant(&ratio)) ||
        ratio.getNumElements() != 1)
      return w.op->emitError() << "cannot export: the ratio must be a "
                                  "constant scalar before opset 12";
    auto *attr = node.add_attribute();
    attr->set_name("ratio");
    attr->set_type(onnx::AttributeProto::FLOAT);
    attr->set_f((*ratio.value_begin<APFloat>()).convertToDouble());
    node.mutable_input(1)->clear();
    w.inputBecameAttribute(1);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Changed semantics
//===----------------------------------------------------------------------===//

/// Before opset 13, Softmax-like ops coerced the input to 2-d at `axis`
/// (default 1). Import rebuilds that: Flatten -> op(axis=1) -> Reshape to
/// the input shape. When axis is the last dimension both forms agree.
static LogicalResult upgradeCoercedSoftmax(PendingOp &op,
                                           const NodeContext &ctx,
                                           OpBuilder &builder) {
  Value input = op.operands.empty() ? Value() : op.operands[0];
  auto type = input ? dyn_cast<RankedTensorType>(input.getType()) : nullptr;
  if (!type)
    return ctx.fail("expects a ranked tensor input");
  int64_t rank = type.getRank();
  int64_t axis = 1;
  if (auto attr = dyn_cast_or_null<IntegerAttr>(op.getAttr("axis")))
    axis = attr.getInt();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.fail("axis is out of range");
  if (axis == rank - 1) {
    op.setAttr(builder, "axis", builder.getI64IntegerAttr(-1));
    return success();
  }
  Value flat = builder.create<FlattenOp>(ctx.loc, input, axis);
  op.operands[0] = flat;
  op.setAttr(builder, "axis", builder.getI64IntegerAttr(1));
  op.reshapeResultLike = input;
  return success();
}

/// Export: the per-axis form equals the coerced one only for the last
/// axis, so another axis is moved last and back by two Transposes.
static LogicalResult downgradeCoercedSoftmax(NodeWriter &w) {
  onnx::NodeProto &node = w.node;
  int64_t rank =
      cast<RankedTensorType>(w.op->getOperand(0).getType()).getRank();
  const auto *axisAttr = findAttribute(node, "axis");
  int64_t axis = axisAttr ? axisAttr->i() : 1;
  axis =
      semantics::normalizeAxis(axis, std::max<int64_t>(rank, 1)).value_or(axis);
  removeAttribute(node, "axis");
  auto *newAxis = node.add_attribute();
  newAxis->set_name("axis");
  newAxis->set_type(onnx::AttributeProto::INT);
  newAxis->set_i(std::max<int64_t>(rank - 1, 0));
  if (rank == 0 || axis == rank - 1)
    return success();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[axis], perm[rank - 1]);
  auto addTranspose = [&](const std::string &from, const std::string &to) {
    onnx::NodeProto &transpose = *w.graph.add_node();
    transpose.set_op_type("Transpose");
    transpose.set_name(w.uniqueNodeName(node.name() + "_axis_last"));
    transpose.add_input(from);
    transpose.add_output(to);
    addIntsAttribute(transpose, "perm", perm);
  };
  std::string input = node.input(0), output = node.output(0);
  std::string movedIn = w.uniqueValueName(input + "_axis_last");
  std::string movedOut = w.uniqueValueName(output + "_axis_last");
  // The node is the graph's last; its input Transpose goes before it.
  addTranspose(input, movedIn);
  int count = w.graph.node_size();
  w.graph.mutable_node()->SwapElements(count - 1, count - 2);
  node.set_input(0, movedIn);
  node.set_output(0, movedOut);
  addTranspose(movedOut, output);
  return success();
}

static LogicalResult
upgradeTrainingBatchNorm(PendingOp &op, const NodeContext &ctx, OpBuilder &) {
  if (op.numOutputs > 1)
    return ctx.fail("training-mode BatchNormalization before opset 14 is "
                    "not supported");
  return success();
}

static LogicalResult upgradeGroupNorm(PendingOp &, const NodeContext &ctx,
                                      OpBuilder &) {
  return ctx.fail("GroupNormalization before opset 21 (per-group scale) is "
                  "not supported");
}
static LogicalResult downgradeGroupNorm(NodeWriter &w) {
  return w.op->emitError()
         << "cannot export: GroupNormalization before opset 21 takes one "
            "scale and bias per group, amp's form one per channel (use "
            "--amp-export-opset=21 or newer)";
}

/// The interpolation modes of GridSample were renamed at opset 20.
static LogicalResult upgradeGridSampleModes(PendingOp &op, const NodeContext &,
                                            OpBuilder &b) {
  if (auto mode = dyn_cast_or_null<StringAttr>(op.getAttr("mode"))) {
    if (mode.getValue() == "bilinear")
      op.setAttr(b, "mode", b.getStringAttr("linear"));
    else if (mode.getValue() == "bicubic")
      op.setAttr(b, "mode", b.getStringAttr("cubic"));
  }
  return success();
}
static LogicalResult downgradeGridSampleModes(NodeWriter &w) {
  for (auto &attr : *w.node.mutable_attribute())
    if (attr.name() == "mode") {
      if (attr.s() == "linear")
        attr.set_s("bilinear");
      else if (attr.s() == "cubic")
        attr.set_s("bicubic");
    }
  return success();
}

/// RoiAlign before opset 16 has no coordinate_transformation_mode and
/// behaves as output_half_pixel (no half-pixel shift; ROIs at least 1 x 1).
static LogicalResult upgradeRoiAlignMode(PendingOp &op, const NodeContext &,
                                         OpBuilder &b) {
  if (!op.getAttr("coordinate_transformation_mode"))
    op.setAttr(b, "coordinate_transformation_mode",
               b.getStringAttr("output_half_pixel"));
  return success();
}
static LogicalResult downgradeRoiAlignMode(NodeWriter &w) {
  const onnx::AttributeProto *mode =
      findAttribute(w.node, "coordinate_transformation_mode");
  if (!mode || mode->s() != "output_half_pixel")
    return w.op->emitError()
           << "cannot export: RoiAlign before opset 16 has no half_pixel "
              "coordinate_transformation_mode (use --amp-export-opset=16 or "
              "newer)";
  removeAttribute(w.node, "coordinate_transformation_mode");
  return success();
}

/// roi and scales are required inputs of Resize before opset 13 (empty when
/// unused).
static LogicalResult downgradeResizeInputs(NodeWriter &w) {
  for (int index : {1, 2}) {
    while (w.node.input_size() <= index)
      w.node.add_input("");
    if (!w.node.input(index).empty())
      continue;
    onnx::TensorProto *empty = w.graph.add_initializer();
    empty->set_name(
        w.uniqueValueName(w.node.name() + (index == 1 ? "_roi" : "_scales")));
    empty->set_data_type(onnx::TensorProto::FLOAT);
    empty->add_dims(0);
    w.node.set_input(index, empty->name());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Features newer opsets added (export fails before them)
//===----------------------------------------------------------------------===//

static LogicalResult downgradePadAxes(NodeWriter &w) {
  if (w.node.input_size() > 3 && !w.node.input(3).empty())
    return w.op->emitError() << "cannot export: Pad's axes input needs opset "
                                "18 (use --amp-export-opset=18 or newer)";
  return success();
}

static LogicalResult downgradePadWrap(NodeWriter &w) {
  const auto *mode = findAttribute(w.node, "mode");
  if (mode && mode->s() == "wrap")
    return w.op->emitError() << "cannot export: Pad mode 'wrap' needs opset "
                                "19 (use --amp-export-opset=19 or newer)";
  return success();
}

static LogicalResult downgradeScatterMinMax(NodeWriter &w) {
  const auto *reduction = findAttribute(w.node, "reduction");
  if (reduction && (reduction->s() == "max" || reduction->s() == "min"))
    return w.op->emitError()
           << "cannot export: " << w.node.op_type() << " reduction '"
           << reduction->s()
           << "' needs opset 18 (use --amp-export-opset=18 or newer)";
  return success();
}

static LogicalResult downgradeCastSaturate(NodeWriter &w) {
  removeAttribute(w.node, "saturate");
  return success();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

namespace {
/// Applies to nodes of the op types in `opTypes` (comma-separated; a
/// trailing `*` matches a prefix, `!Name` excludes) whose opset is below
/// `since`: importing, `upgrade` rewrites the old form into amp's; writing,
/// `downgrade` rewrites amp's form into the old one (or fails). A missing
/// function means the forms agree in that direction.
struct VersionRule {
  const char *opTypes;
  int64_t since;
  LogicalResult (*upgrade)(PendingOp &, const NodeContext &, OpBuilder &);
  LogicalResult (*downgrade)(NodeWriter &);
};

/// A rule that applies at every opset (amp's form differs from each).
constexpr int64_t kAlways = std::numeric_limits<int64_t>::max();

const VersionRule kVersionRules[] = {
    {"Reduce*,!ReduceSum", 18, upgradeAxes, downgradeReduceAxes},
    {"ReduceSum", 13, upgradeAxes, downgradeReduceAxes},
    {"Squeeze,Unsqueeze", 13, upgradeAxes, downgradeAxes},
    {"Split", 13, upgradeSplitSizes, downgradeSplitSizes},
    {"Split", kAlways, upgradeSplitCount, downgradeSplitCount},
    {"Dropout", 12, upgradeDropoutRatio, downgradeDropoutRatio},
    {"Softmax,LogSoftmax,Hardmax", 13, upgradeCoercedSoftmax,
     downgradeCoercedSoftmax},
    {"BatchNormalization", 14, upgradeTrainingBatchNorm, nullptr},
    {"Resize", 13, nullptr, downgradeResizeInputs},
    {"Pad", 18, nullptr, downgradePadAxes},
    {"ScatterND,ScatterElements", 18, nullptr, downgradeScatterMinMax},
    {"Pad", 19, nullptr, downgradePadWrap},
    {"Cast", 19, nullptr, downgradeCastSaturate},
    {"GridSample", 20, upgradeGridSampleModes, downgradeGridSampleModes},
    {"GroupNormalization", 21, upgradeGroupNorm, downgradeGroupNorm},
    {"RoiAlign", 16, upgradeRoiAlignMode, downgradeRoiAlignMode},
};

bool matchesOpType(const VersionRule &rule, StringRef opType) {
  SmallVector<StringRef> patterns;
  StringRef(rule.opTypes).split(patterns, ',');
  bool matched = false;
  for (StringRef pattern : patterns) {
    bool exclude = pattern.consume_front("!");
    bool prefix = pattern.consume_back("*");
    bool hit = prefix ? opType.starts_with(pattern) : opType == pattern;
    if (hit && exclude)
      return false;
    matched |= hit;
  }
  return matched;
}
} // namespace

LogicalResult onnx_versions::upgradeNode(PendingOp &op, const NodeContext &ctx,
                                         OpBuilder &builder) {
  for (const VersionRule &rule : kVersionRules)
    if (ctx.opset < rule.since && rule.upgrade &&
        matchesOpType(rule, op.opType) &&
        failed(rule.upgrade(op, ctx, builder)))
      return failure();
  return success();
}

LogicalResult onnx_versions::downgradeNode(NodeWriter &writer) {
  StringRef opType = writer.node.op_type();
  for (const VersionRule &rule : kVersionRules)
    if (writer.opset < rule.since && rule.downgrade &&
        matchesOpType(rule, opType) && failed(rule.downgrade(writer)))
      return failure();
  return success();
}

std::optional<int64_t> mlir::amp::getSupportedOpVersion(StringRef opType) {
  return onnx_import::getSelectedOpVersion(opType, kMaxSupportedOpset);
}

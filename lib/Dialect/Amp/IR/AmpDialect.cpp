//===- AmpDialect.cpp - amp dialect registration --------------------------===//

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Dialect/Amp/IR/AmpOpsDialect.cpp.inc"

void AmpDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "amp/Dialect/Amp/IR/AmpOps.cpp.inc"
      >();
}

Operation *AmpDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

namespace {
/// Re-infers the result types of an amp op and adopts them when they are
/// more static (e.g. a Reshape whose shape operand became constant). Users
/// outside the amp dialect keep seeing the old type through amp.identity.
struct RefineResultTypes : RewritePattern {
  RefineResultTypes(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    auto inference = dyn_cast<InferTypeOpInterface>(op);
    if (!inference || !isa<AmpDialect>(op->getDialect()) ||
        op->getNumRegions() != 0)
      return failure();
    // Refining pays off only for amp users; values that only leave the
    // dialect (returns, bridging identities) keep their type.
    if (llvm::none_of(op->getUsers(), [](Operation *user) {
          return isa<AmpDialect>(user->getDialect());
        }))
      return failure();
    SmallVector<Type> inferred;
    if (failed(inference.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getAttrDictionary(), op->getPropertiesStorage(),
            op->getRegions(), inferred)) ||
        inferred.size() != op->getNumResults())
      return failure();
    bool changed = false;
    for (auto [result, type] : llvm::zip(op->getResults(), inferred)) {
      auto oldType = dyn_cast<RankedTensorType>(result.getType());
      auto newType = dyn_cast<RankedTensorType>(type);
      if (!oldType || !newType || oldType == newType ||
          oldType.getElementType() != newType.getElementType() ||
          oldType.getRank() != newType.getRank())
        continue;
      // Only ever make dimensions static.
      bool refines = true;
      for (auto [o, n] : llvm::zip(oldType.getShape(), newType.getShape()))
        if (!ShapedType::isDynamic(o) && o != n)
          refines = false;
      if (!refines)
        continue;
      changed = true;
      rewriter.modifyOpInPlace(op, [&] { result.setType(newType); });
      rewriter.setInsertionPointAfter(op);
      IdentityOp bridge;
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
        if (isa<AmpDialect>(use.getOwner()->getDialect()))
          continue;
        if (!bridge)
          bridge = rewriter.create<IdentityOp>(op->getLoc(), oldType, result);
        rewriter.modifyOpInPlace(use.getOwner(), [&] { use.set(bridge); });
      }
    }
    return success(changed);
  }
};
} // namespace

void AmpDialect::getCanonicalizationPatterns(RewritePatternSet &results) const {
  results.add<RefineResultTypes>(getContext());
}

LogicalResult AmpDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  // Model-level facts kept by the ONNX importer for the exporter.
  if (name == "amp.opset_import" || name == "amp.metadata" ||
      name == "amp.ir_version" || name == "amp.producer")
    return success();
  if (name == kReasonAttrName) {
    if (!isa<StringAttr>(attribute.getValue()))
      return op->emitError() << "'" << kReasonAttrName << "' must be a string";
    return success();
  }
  // Training: the importer's initializer marker (on constants) and the
  // train-step builder's description of the program (on the module).
  if (name == "amp.initializer") {
    if (!isa<UnitAttr>(attribute.getValue()) || !isa<ConstantOp>(op))
      return op->emitError() << "'amp.initializer' must be a unit attribute "
                                "of an amp.constant";
    return success();
  }
  if (name == "amp.train") {
    if (!isa<DictionaryAttr>(attribute.getValue()) || !isa<ModuleOp>(op))
      return op->emitError() << "'amp.train' must be a dictionary on the "
                                "module";
    return success();
  }
  // The ONNX model a train step was built from (its bytes), for export.
  if (name == "amp.onnx_source") {
    auto bytes = dyn_cast<DenseResourceElementsAttr>(attribute.getValue());
    if (!bytes || !isa<ModuleOp>(op) || bytes.getType().getRank() != 1 ||
        !bytes.getType().getElementType().isInteger(8))
      return op->emitError() << "'amp.onnx_source' must be a 1-D i8 "
                                "dense_resource on the module";
    return success();
  }
  if (name == kProbeAttrName) {
    if (!isa<IntegerAttr>(attribute.getValue()))
      return op->emitError() << "'" << kProbeAttrName
                             << "' must be an integer";
    return success();
  }
  if (name != kAccumulateAttrName)
    return op->emitError() << "unknown amp attribute '" << name << "'";
  auto type = dyn_cast<TypeAttr>(attribute.getValue());
  if (!type || !type.getValue().isF32())
    return op->emitError() << "'" << kAccumulateAttrName
                           << "' must be the type f32";
  auto precisionOp = dyn_cast<PrecisionOpInterface>(op);
  if (!precisionOp || !precisionOp.supportsF32Accumulation())
    return op->emitError() << "'" << kAccumulateAttrName
                           << "' is set on an op that cannot accumulate in "
                              "f32";
  return success();
}

std::string mlir::amp::getWeightResourceKey(llvm::StringRef name) {
  std::string key;
  for (char c : name)
    key.push_back(llvm::isAlnum(c) || c == '_' || c == '.' ? c : '_');
  if (key.empty() || llvm::isDigit(key.front()))
    key.insert(key.begin(), 'w');
  return key;
}

//===- AmpToLinalg.cpp - the convert-amp-to-linalg pass -------------------===//

#include "LoweringUtils.h"
#include "amp/Conversion/AmpToLinalg/Passes.h"
#include "amp/Conversion/AmpToLinalg/RuntimeChecks.h"
#include "llvm/ADT/ScopeExit.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::amp {
#define GEN_PASS_DEF_CONVERTAMPTOLINALG
#include "amp/Conversion/AmpToLinalg/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::lowering;

namespace {

/// Unsigned integer tensors become signless; the storage types (8-bit
/// floats, 4- and 2-bit integers) become i8 tensors of their bits, one
/// element per byte (the narrow integers sign- or zero-extended), which is
/// what the runtime holds and what vectorized loops may load; everything
/// else is unchanged.
class AmpTypeConverter : public TypeConverter {
public:
  explicit AmpTypeConverter(MLIRContext *context) {
    addConversion([](Type type) { return type; });
    addConversion([context](RankedTensorType type) -> Type {
      if (isStorageElementType(type.getElementType()))
        return type.clone(IntegerType::get(context, 8));
      auto intType = dyn_cast<IntegerType>(type.getElementType());
      if (!intType || intType.isSignless())
        return type;
      return type.clone(IntegerType::get(context, intType.getWidth()));
    });
    auto materialize = [](OpBuilder &b, Type type, ValueRange inputs,
                          Location loc) -> std::optional<Value> {
      if (inputs.size() != 1)
        return std::nullopt;
      return b.create<UnrealizedConversionCastOp>(loc, type, inputs)
          .getResult(0);
    };
    addSourceMaterialization(materialize);
    addTargetMaterialization(materialize);
    addArgumentMaterialization(materialize);
  }
};

/// amp.constant -> arith.constant (unsigned elements reinterpreted as
/// signless; dense_resource blobs are shared, not copied).
struct ConstantOpLowering : public OpConversionPattern<amp::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(amp::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    ElementsAttr value = op.getValue();
    Type original = op.getType().getElementType();
    if (type != op.getType()) {
      auto dense = dyn_cast<DenseElementsAttr>(value);
      if (dense && original.getIntOrFloatBitWidth() < 8) {
        // A 4- or 2-bit integer: its value, extended to a byte.
        bool isUnsigned = original.isUnsignedInteger();
        value = dense.mapValues(type.getElementType(), [&](const APInt &v) {
          return isUnsigned ? v.zext(8) : v.sext(8);
        });
      } else if (dense) {
        value = dense.bitcast(type.getElementType());
      } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
        value = DenseResourceElementsAttr::get(type, resource.getRawHandle());
      } else {
        return notLowerable(op, "unsupported constant attribute");
      }
    }
    // A 0-d global's initial value is read as a splat when it is lowered
    // to LLVM, which a dense_resource cannot give: copy the one element.
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(value);
        resource && type.getRank() == 0) {
      AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      bool splat = false;
      if (!blob ||
          !DenseElementsAttr::isValidRawBuffer(type, blob->getData(), splat))
        return notLowerable(op, "the constant's resource holds no data of "
                                "its type");
      value = DenseElementsAttr::getFromRawBuffer(type, blob->getData());
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type,
                                                   cast<TypedAttr>(value));
    return success();
  }
};

struct ConvertAmpToLinalgPass
    : public amp::impl::ConvertAmpToLinalgBase<ConvertAmpToLinalgPass> {
  using ConvertAmpToLinalgBase::ConvertAmpToLinalgBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    AmpTypeConverter converter(context);
    // The patterns add their run-time checks' messages to this array.
    if (runtimeChecks && !module->hasAttr(kRuntimeChecksAttrName))
      module->setAttr(kRuntimeChecksAttrName, ArrayAttr::get(context, {}));
    auto dropUnusedChecks = llvm::make_scope_exit([&] {
      auto table = module->getAttrOfType<ArrayAttr>(kRuntimeChecksAttrName);
      if (table && table.empty())
        module->removeAttr(kRuntimeChecksAttrName);
    });

    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect,
                           scf::SCFDialect,
                           bufferization::BufferizationDialect>();
    target.addIllegalDialect<AmpDialect>();
    target.addLegalOp<amp::NoneOp, UnrealizedConversionCastOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
        [&](Operation *op) { return converter.isLegal(op); });

    RewritePatternSet patterns(context);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    patterns.add<ConstantOpLowering>(converter, context);
    populateElementwisePatterns(converter, patterns);
    populateReductionPatterns(converter, patterns);
    populateSoftmaxPatterns(converter, patterns);
    populateGemmPatterns(converter, patterns);
    populateConvPatterns(converter, patterns);
    populatePoolingPatterns(converter, patterns);
    populateNormalizationPatterns(converter, patterns);
    populateLossPatterns(converter, patterns);
    populateTrainingPatterns(converter, patterns, parallelUnscale);
    populateShapePatterns(converter, patterns);
    populateSliceConcatPatterns(converter, patterns);
    populatePadTilePatterns(converter, patterns);
    populateGatherPatterns(converter, patterns);
    populateScatterPatterns(converter, patterns);
    populateGeneratorPatterns(converter, patterns);
    populateTopKPatterns(converter, patterns);
    populateResizePatterns(converter, patterns);
    populateGridSamplePatterns(converter, patterns);
    populateDataDependentPatterns(converter, patterns);
    populateRoiAlignPatterns(converter, patterns);
    populateLinearAlgebraPatterns(converter, patterns);
    if (hostLoops) {
      populateRecurrentPatterns(converter, patterns);
      populateControlFlowPatterns(converter, patterns);
      populateDetectionPatterns(converter, patterns);
    }
    populateQuantizationPatterns(converter, patterns);

    // The conversion driver reports an op without a lowering as "failed to
    // legalize"; say instead which ONNX operator cannot run, unless a
    // pattern already said why.
    struct Failure {
      Location loc;
      std::string opName;
    };
    SmallVector<Failure> unlowered;
    llvm::DenseSet<Location> explained;
    LogicalResult converted = success();
    {
      ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
        std::string message = diag.str();
        StringRef text(message);
        if (text.starts_with("failed to legalize operation '")) {
          StringRef name = text.drop_front(strlen("failed to legalize "
                                                  "operation '"))
                               .split('\'')
                               .first;
          unlowered.push_back({diag.getLocation(), name.str()});
          return success();
        }
        if (text.contains("not lowerable to the CPU backend"))
          explained.insert(diag.getLocation());
        return failure(); // let the next handler print it
      });
      converted = applyPartialConversion(module, target, std::move(patterns));
    }
    if (failed(converted)) {
      for (const Failure &failure : unlowered) {
        if (explained.contains(failure.loc))
          continue;
        StringRef onnxName = failure.opName;
        for (const OnnxOpName &entry : getOnnxOpNames())
          if (entry.operationName == failure.opName)
            onnxName = entry.onnxName;
        if (hostLoops)
          emitError(failure.loc)
              << "ONNX " << onnxName << " is not lowerable to " << targetName
              << " yet (amp-run cannot run this model; docs/CpuBackend.md "
                 "lists the lowered operators)";
        else
          emitError(failure.loc)
              << "ONNX " << onnxName << " is not lowerable to " << targetName
              << " yet (docs/CudaBackend.md lists what it runs)";
      }
      if (unlowered.empty() && explained.empty())
        module.emitError("convert-amp-to-linalg failed");
      return signalPassFailure();
    }
    // The LLVM translation does not know amp's argument and result
    // attributes (names, training roles).
    module.walk([](func::FuncOp func) {
      auto dropAmp = [](DictionaryAttr attrs) {
        SmallVector<NamedAttribute> kept;
        if (attrs)
          for (NamedAttribute attr : attrs)
            if (!attr.getName().getValue().starts_with("amp."))
              kept.push_back(attr);
        return kept;
      };
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        func.setArgAttrs(i, dropAmp(func.getArgAttrDict(i)));
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        func.setResultAttrs(i, dropAmp(func.getResultAttrDict(i)));
    });
    // Absent optional operands are no longer used.
    module.walk([](amp::NoneOp op) {
      if (op->use_empty())
        op->erase();
    });
  }
};

} // namespace

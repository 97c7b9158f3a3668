//===- TrainStep.cpp - mixed-precision train steps as amp functions -------===//
//
// Order of construction (see docs/Training.md):
//   1. @train_step: a copy of @main plus the loss; initializers that the
//      loss depends on through differentiable operands become parameter
//      arguments, training-mode BatchNormalization statistics become buffer
//      arguments. @main gets the same arguments and eval-mode semantics.
//   2. The front end (cleanup, amp-autocast) runs on the module, so the
//      forward pass gets the policy's precision and each fp32 parameter is
//      cast once.
//   3. The reverse pass (Autodiff.cpp), seeded with 1.
//   4. The Inf/NaN check (one multi-tensor op), clipping, the
//      learning-rate schedule and the optimizer (Optimizer.cpp).
//   5. With a loss scale, the amp-loss-scale pass (LossScale.cpp): the seed
//      becomes the scale, the check unscales, every state update is skipped
//      on overflow and the scale updates.
//
//===----------------------------------------------------------------------===//

#include "amp/Training/TrainStep.h"

#include "TrainStepInternal.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Target/ONNX/ONNXImporter.h"
#include "amp/Training/Autodiff.h"
#include "amp/Training/Passes.h"
#include "amp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::training;
using gradients::GradientBuilder;
using gradients::tensorType;

LossScaleMode
mlir::amp::training::resolveLossScaleMode(const TrainStepOptions &options) {
  if (options.lossScale != LossScaleMode::Default)
    return options.lossScale;
  bool fp16 = options.frontEnd.runAutocast &&
              options.frontEnd.autocast.optLevel > 0 &&
              parseAutocastType(options.frontEnd.autocast.type) ==
                  amp_runtime::LowFloatKind::F16;
  return fp16 ? LossScaleMode::Dynamic : LossScaleMode::None;
}

namespace {

/// A value of the training state: its name, role and initial value.
struct StateEntry {
  std::string name;
  StringRef role;
  ElementsAttr init;
};

/// An initializer turned into an argument.
struct Initializer {
  std::string name;
  mutable ConstantOp constant;
};

class TrainStepBuilder {
public:
  TrainStepBuilder(ModuleOp module, const TrainStepOptions &options,
                   const PipelineRunner &runner)
      : module(module), options(options), runner(runner),
        context(module.getContext()) {}

  LogicalResult build();

private:
  /// Runs the passes `add` adds on the module (with the caller's runner).
  LogicalResult runPasses(function_ref<void(OpPassManager &)> add);
  LogicalResult collectInitializers(func::FuncOp func,
                                    SmallVectorImpl<Initializer> &params,
                                    SmallVectorImpl<Initializer> &buffers,
                                    SmallVectorImpl<Value> &bufferUpdates,
                                    Value loss);
  FailureOr<Value> appendLoss(func::FuncOp func, OpBuilder &builder);
  LogicalResult prepareMain(func::FuncOp main);
  LogicalResult appendUpdate(func::FuncOp step);
  void buildInitialState();

  ModuleOp module;
  const TrainStepOptions &options;
  const PipelineRunner &runner;
  MLIRContext *context;
  LossScaleMode scaleMode = LossScaleMode::None;

  /// Parameters and buffers, in argument order, with their initial values;
  /// then the optimizer, scaler and step state.
  SmallVector<StateEntry> params, buffers, stateInit;
};
} // namespace

/// Replaces the uses of each initializer constant with a new argument of
/// `func` inserted at `index` (the constants are erased).
static void turnIntoArguments(func::FuncOp func, ArrayRef<Initializer> inits,
                              unsigned index, StringRef role) {
  MLIRContext *context = func.getContext();
  for (auto [i, init] : llvm::enumerate(inits)) {
    unsigned position = index + i;
    NamedAttrList attrs;
    attrs.set("amp.name", StringAttr::get(context, init.name));
    attrs.set(kRoleAttrName, StringAttr::get(context, role));
    func.insertArgument(position, init.constant.getType(),
                        attrs.getDictionary(context), init.constant.getLoc());
    init.constant.getResult().replaceAllUsesWith(func.getArgument(position));
    init.constant.erase();
  }
}

/// Gives the arguments of `func` with a dynamic dimension 0 the static size
/// `batch` (the cleanup's type refinement then makes the body static).
static void specializeBatch(func::FuncOp func, int64_t batch) {
  SmallVector<Type> types;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (type && type.getRank() > 0 && type.isDynamicDim(0)) {
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = batch;
      arg.setType(type.clone(shape));
    }
    types.push_back(arg.getType());
  }
  func.setType(FunctionType::get(func.getContext(), types,
                                 func.getResultTypes()));
}

static std::string initializerName(ConstantOp constant) {
  return getConstantName(constant);
}

LogicalResult TrainStepBuilder::collectInitializers(
    func::FuncOp func, SmallVectorImpl<Initializer> &paramInits,
    SmallVectorImpl<Initializer> &bufferInits,
    SmallVectorImpl<Value> &bufferUpdates, Value loss) {
  Block &body = func.getBody().front();
  std::optional<llvm::Regex> frozen;
  if (!options.frozen.empty()) {
    frozen.emplace(options.frozen);
    std::string error;
    if (!frozen->isValid(error))
      return module.emitError("--frozen: invalid regular expression '")
             << options.frozen << "': " << error;
  }
  // Training-mode BatchNormalization: running statistics are buffers.
  llvm::DenseMap<Operation *, Value> bufferUpdate;
  for (auto bn : body.getOps<BatchNormalizationOp>()) {
    if (!bn.getTrainingMode() || bn.getRunningStats().size() != 2)
      continue;
    Value stats[2] = {bn.getInputMean(), bn.getInputVar()};
    for (int k = 0; k < 2; ++k) {
      auto constant = stats[k].getDefiningOp<ConstantOp>();
      if (!constant || !constant->hasAttr(kInitializerAttrName))
        continue;
      if (bufferUpdate.count(constant))
        return bn.emitOpError("shares its running statistics with another "
                              "BatchNormalization; amp cannot update both");
      bufferUpdate[constant] = bn.getRunningStats()[k];
    }
  }
  SmallVector<Value> candidates;
  SmallVector<ConstantOp> candidateOps;
  for (auto constant : body.getOps<ConstantOp>()) {
    if (!constant->hasAttr(kInitializerAttrName) || bufferUpdate.count(constant))
      continue;
    auto type = dyn_cast<RankedTensorType>(constant.getType());
    if (!type || !isa<FloatType>(type.getElementType()))
      continue;
    std::string name = initializerName(constant);
    if (frozen && frozen->match(name))
      continue;
    candidates.push_back(constant);
    candidateOps.push_back(constant);
  }
  Activity activity(body, loss, candidates);
  for (ConstantOp constant : candidateOps)
    if (activity.reaches(constant))
      paramInits.push_back({initializerName(constant), constant});
  for (auto constant : body.getOps<ConstantOp>())
    if (auto it = bufferUpdate.find(constant); it != bufferUpdate.end()) {
      bufferInits.push_back({initializerName(constant), constant});
      bufferUpdates.push_back(it->second);
    }
  if (paramInits.empty())
    return module.emitError("nothing to train: no float initializer reaches "
                            "the loss")
           << (frozen ? " (after --frozen)" : "");
  return success();
}

FailureOr<Value> TrainStepBuilder::appendLoss(func::FuncOp func,
                                              OpBuilder &builder) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  Value output = ret.getOperand(0);
  auto outputType = cast<RankedTensorType>(output.getType());
  Location loc = func.getLoc();
  GradientBuilder gb(builder, loc);
  auto addLabels = [&](Type type) {
    unsigned index = func.getNumArguments();
    NamedAttrList attrs;
    attrs.set("amp.name", StringAttr::get(context, "labels"));
    attrs.set(kRoleAttrName, StringAttr::get(context, "labels"));
    func.insertArgument(index, type, attrs.getDictionary(context), loc);
    return func.getArgument(index);
  };
  if (!isa<FloatType>(outputType.getElementType()))
    return func.emitError("the model's first output (the ")
           << (options.loss == LossKind::Output ? "loss" : "prediction")
           << ") is not a float tensor but " << outputType,
           failure();
  Value loss;
  switch (options.loss) {
  case LossKind::CrossEntropy: {
    if (outputType.getRank() < 2)
      return func.emitError("--loss=cross-entropy needs (N, C, ...) logits "
                            "as the first output; it has type ")
                 << outputType,
             failure();
    SmallVector<int64_t> labelShape{outputType.getDimSize(0)};
    for (int64_t i = 2; i < outputType.getRank(); ++i)
      labelShape.push_back(outputType.getDimSize(i));
    Value labels = addLabels(
        RankedTensorType::get(labelShape, builder.getI64Type()));
    loss = gb.createAll<SoftmaxCrossEntropyLossOp>(
        {output, labels, gb.none()}, {gb.attr("reduction", StringRef("mean"))})
               .front();
    break;
  }
  case LossKind::MeanSquaredError: {
    Value labels = addLabels(outputType);
    Value diff = gb.sub(output, labels);
    loss = gb.create<ReduceMeanOp>({gb.mul(diff, diff), gb.none()},
                                   {gb.attr("keepdims", int64_t(0))});
    break;
  }
  case LossKind::Output:
    if (outputType.getNumElements() != 1)
      return func.emitError("--loss=output needs a scalar loss as the "
                            "model's first output; it has type ")
                 << outputType,
             failure();
    loss = outputType.getRank() == 0
               ? output
               : gb.create<ReshapeOp>({output, gb.i64s({})});
    break;
  }
  if (!loss || gb.hasFailed())
    return failure();
  // The loss is reported in fp32 (fp64 models keep fp64).
  if (tensorType(loss).getElementType().isF64())
    return loss;
  return gb.castTo(loss, builder.getF32Type());
}

LogicalResult TrainStepBuilder::prepareMain(func::FuncOp main) {
  // Parameters and buffers become arguments (same order as @train_step).
  Block &body = main.getBody().front();
  llvm::StringMap<ConstantOp> byName;
  for (auto constant : body.getOps<ConstantOp>())
    if (constant->hasAttr(kInitializerAttrName))
      byName[initializerName(constant)] = constant;
  auto collect = [&](ArrayRef<StateEntry> entries,
                     SmallVectorImpl<Initializer> &inits) -> LogicalResult {
    for (const StateEntry &entry : entries) {
      ConstantOp constant = byName.lookup(entry.name);
      if (!constant)
        return main.emitError("initializer '") << entry.name
                                               << "' not found in @main";
      inits.push_back({entry.name, constant});
    }
    return success();
  };
  SmallVector<Initializer> paramInits, bufferInits;
  if (failed(collect(params, paramInits)) ||
      failed(collect(buffers, bufferInits)))
    return failure();
  turnIntoArguments(main, paramInits, 0, "param");
  turnIntoArguments(main, bufferInits, paramInits.size(), "buffer");
  // Eval mode: Dropout is the identity, and BatchNormalization normalises with the running statistics.
  if (failed(makeDropoutsIdentity(main)))
    return failure();
  SmallVector<BatchNormalizationOp> trainingBNs;
  for (auto bn : body.getOps<BatchNormalizationOp>())
    if (bn.getTrainingMode())
      trainingBNs.push_back(bn);
  for (BatchNormalizationOp bn : trainingBNs) {
    for (Value stat : bn.getRunningStats())
      if (!stat.use_empty())
        return bn.emitOpError("its running statistics are model outputs; "
                              "amp keeps them as training state instead");
    OpBuilder builder(bn);
    NamedAttrList attrs(bn->getAttrDictionary());
    attrs.erase("training_mode");
    auto eval = builder.create<BatchNormalizationOp>(
        bn.getLoc(), TypeRange{bn.getY().getType()}, bn->getOperands(),
        attrs.getAttrs());
    bn.getY().replaceAllUsesWith(eval.getY());
    bn.erase();
  }
  return success();
}

LogicalResult TrainStepBuilder::build() {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.getBody().empty())
    return module.emitError("--train needs the model's forward function "
                            "@main");
  if (main.getNumResults() == 0)
    return main.emitError("the model has no outputs");
  if (module.lookupSymbol("train_step") ||
      module.lookupSymbol("initial_state"))
    return module.emitError("the module already holds a training program");
  scaleMode = resolveLossScaleMode(options);

  // 1. @train_step = @main + loss.
  OpBuilder moduleBuilder(context);
  moduleBuilder.setInsertionPointAfter(main);
  auto step = cast<func::FuncOp>(moduleBuilder.clone(*main));
  step.setSymName("train_step");
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    step.setArgAttr(i, kRoleAttrName, StringAttr::get(context, "input"));
  if (options.batchSize > 0)
    specializeBatch(step, options.batchSize);
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder builder(ret);
  FailureOr<Value> loss = appendLoss(step, builder);
  if (failed(loss))
    return failure();
  SmallVector<Initializer> paramInits, bufferInits;
  SmallVector<Value> bufferUpdates;
  if (failed(collectInitializers(step, paramInits, bufferInits, bufferUpdates,
                                 *loss)))
    return failure();
  for (const Initializer &init : paramInits)
    params.push_back({init.name, "param", init.constant.getValue()});
  for (const Initializer &init : bufferInits)
    buffers.push_back({init.name, "buffer", init.constant.getValue()});
  SmallVector<Value> results{*loss};
  results.append(bufferUpdates);
  builder.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  step.setType(FunctionType::get(context, step.getArgumentTypes(),
                                 TypeRange(ValueRange(results))));
  if (options.batchSize > 0)
    specializeBatch(step, options.batchSize);
  turnIntoArguments(step, paramInits, 0, "param");
  turnIntoArguments(step, bufferInits, paramInits.size(), "buffer");
  if (failed(prepareMain(main)))
    return failure();

  // 2. Cleanup and autocast of both functions.
  FrontEndOptions frontEnd = options.frontEnd;
  frontEnd.releaseWeights = false;
  auto cleanupAndAutocast = [&](OpPassManager &pm) {
    // Static shapes (--static-batch) reach every op in one top-down sweep
    // (the default bottom-up order refines one level per iteration).
    GreedyRewriteConfig refine;
    refine.useTopDownTraversal = true;
    refine.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    pm.addPass(createCanonicalizerPass(refine));
    buildFrontEndPipeline(pm, frontEnd);
    // Function ops (Attention) are differentiated through their graphs.
    pm.addPass(createAmpDecompose());
  };
  if (failed(runPasses(cleanupAndAutocast)))
    return failure();

  // 3-4. Backward pass and optimizer, then loss scaling (amp-loss-scale).
  if (failed(appendUpdate(module.lookupSymbol<func::FuncOp>("train_step"))))
    return failure();
  buildInitialState();

  auto scaleAndCleanup = [&](OpPassManager &pm) {
    if (scaleMode == LossScaleMode::Static ||
        scaleMode == LossScaleMode::Dynamic)
      pm.addPass(
          createAmpLossScale(getLossScalePassOptions(options, scaleMode)));
    buildImportCleanupPipeline(pm);
  };
  if (failed(runPasses(scaleAndCleanup)))
    return failure();
  // The initializer markers have served their purpose.
  module.walk([](ConstantOp constant) {
    constant->removeAttr(kInitializerAttrName);
  });
  return success();
}

/// Inserts a rank-0 (or `shape`) argument named `name` at `index`.
Value mlir::amp::training::insertStateArgument(func::FuncOp func,
                                               unsigned index, Type type,
                                               StringRef name, StringRef role) {
  MLIRContext *context = func.getContext();
  NamedAttrList attrs;
  attrs.set("amp.name", StringAttr::get(context, name));
  attrs.set(kRoleAttrName, StringAttr::get(context, role));
  func.insertArgument(index, type, attrs.getDictionary(context),
                      func.getLoc());
  return func.getArgument(index);
}

static ElementsAttr splat(RankedTensorType type, double value) {
  Type element = type.getElementType();
  if (isa<FloatType>(element))
    return DenseElementsAttr::get(type, FloatAttr::get(element, value));
  return DenseElementsAttr::get(
      type, IntegerAttr::get(element, static_cast<int64_t>(value)));
}

/// The Dropout generator's counter of `func`: `counter + replica * 2^32`,
/// with `replica` a new i64 argument at `index` (amp.role
/// "dropout_replica"). Philox's key is (lo32, hi32) of it, so replica 0
/// draws the masks of a single process bit for bit and every replica
/// draws its own (for step numbers below 2^32).
static Value withReplica(func::FuncOp func, Value counter, unsigned index) {
  auto scalarI64 = RankedTensorType::get({}, IntegerType::get(func.getContext(), 64));
  Value replica = insertStateArgument(func, index, scalarI64, "dropout_replica",
                                      "dropout_replica");
  OpBuilder builder = OpBuilder::atBlockBegin(&func.getBody().front());
  GradientBuilder gb(builder, func.getLoc());
  Value high = gb.mul(replica, gb.scalar(scalarI64.getElementType(), 4294967296.0));
  return gb.add(counter, high);
}

namespace {
/// The state an optimizer step reads, as values of the function being built.
struct UpdateInputs {
  SmallVector<Value> params, grads;
  SmallVector<SmallVector<Value>> optimizerState;
  Value step;
  /// @apply_gradients' `found_inf` argument: the caller's overflow flag
  /// (a reduction over ranks), or'ed into the step's own.
  Value externalFoundInf;
};
/// What it produces.
struct UpdateResults {
  SmallVector<Value> params, optimizerState;
  Value step, foundInf, nonfinite, lr;
};
} // namespace

/// The Inf/NaN check, clipping, schedule and optimizer, on unscaled
/// gradients. The check is the multi-tensor unscale op with a scale of 1:
/// amp-loss-scale (LossScale.cpp) gives it 1/loss_scale and makes the
/// state updates conditional on its `found_inf`.
static FailureOr<UpdateResults> buildUpdate(GradientBuilder &gb,
                                            const TrainStepOptions &options,
                                            const UpdateInputs &in) {
  Type f32 = gb.getBuilder().getF32Type(), i64 = gb.getBuilder().getI64Type();
  unsigned numParams = in.params.size();
  SmallVector<Value> g(in.grads);
  UpdateResults out;
  SmallVector<Value> operands{gb.scalar(f32, 1.0)};
  operands.append(g);
  SmallVector<Value> results = gb.createAll<MultiTensorUnscaleCheckOp>(operands);
  if (results.empty())
    return failure();
  for (unsigned i = 0; i < numParams; ++i)
    g[i] = results[i];
  out.foundInf = results[numParams];
  out.nonfinite = results[numParams + 1];
  // A flag from the caller forces the skip on every rank alike; the
  // result is the flag this step acted on.
  if (in.externalFoundInf)
    out.foundInf = gb.create<MaxOp>({out.foundInf, in.externalFoundInf});
  // Clipping acts on the unscaled gradients.
  if (options.clipGradNorm > 0)
    clipGradNorm(gb, options.clipGradNorm, g);

  Value stepF = gb.castTo(in.step, f32);
  out.lr = buildLearningRate(gb, options, stepF);
  for (unsigned p = 0; p < numParams; ++p) {
    SmallVector<Value> updated;
    buildOptimizerUpdate(gb, options, out.lr, stepF, in.params[p], g[p],
                         in.optimizerState[p], updated);
    if (updated.size() != 1 + in.optimizerState[p].size())
      return failure();
    out.params.push_back(updated[0]);
    out.optimizerState.append(updated.begin() + 1, updated.end());
  }
  out.step = gb.add(in.step, gb.scalar(i64, 1.0));
  if (gb.hasFailed())
    return failure();
  return out;
}

void mlir::amp::training::setResults(
    func::FuncOp func, ArrayRef<Value> results,
    ArrayRef<std::pair<std::string, StringRef>> names) {
  MLIRContext *context = func.getContext();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder builder(ret);
  builder.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  func.setType(FunctionType::get(context, func.getArgumentTypes(),
                                 TypeRange(ValueRange(results))));
  for (auto [i, entry] : llvm::enumerate(names)) {
    func.setResultAttr(i, "amp.name", StringAttr::get(context, entry.first));
    func.setResultAttr(i, kRoleAttrName,
                       StringAttr::get(context, entry.second));
  }
}

LogicalResult TrainStepBuilder::appendUpdate(func::FuncOp step) {
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);
  SmallVector<Value> bufferUpdates(ret.getOperands().drop_front());
  unsigned numParams = params.size(), numBuffers = buffers.size();
  Type f32 = Float32Type::get(context), i64 = IntegerType::get(context, 64);
  auto scalarF32 = RankedTensorType::get({}, f32);
  auto scalarI64 = RankedTensorType::get({}, i64);
  SmallVector<StringRef> stateNames = getOptimizerStateNames(options);
  SmallVector<Type> paramTypes;
  for (unsigned i = 0; i < numParams; ++i)
    paramTypes.push_back(step.getArgument(i).getType());
  auto gradName = [&](unsigned p) { return params[p].name + ".grad"; };

  // --split-step: @compute_gradients (forward + backward, accumulating) is
  // a copy of the forward made now; @apply_gradients is built below.
  func::FuncOp compute;
  if (options.splitStep) {
    compute = step.clone();
    compute.setSymName("compute_gradients");
    module.insert(Block::iterator(step), compute);
  }

  // Appends the optimizer and step arguments at `index`.
  auto addStateArguments = [&](func::FuncOp func, unsigned index,
                               UpdateInputs &in) {
    in.optimizerState.assign(numParams, {});
    for (auto [p, entry] : llvm::enumerate(params))
      for (StringRef suffix : stateNames)
        in.optimizerState[p].push_back(insertStateArgument(
            func, index++, paramTypes[p], (entry.name + "." + suffix).str(),
            "optimizer"));
    in.step = insertStateArgument(func, index++, scalarI64, "step", "step");
    return index;
  };
  // The result list of an optimizer step (after `prefix`).
  // `newBuffers` is empty for @apply_gradients, which has no buffers.
  auto updateResults = [&](const UpdateResults &out,
                           SmallVectorImpl<Value> &results,
                           SmallVectorImpl<std::pair<std::string, StringRef>>
                               &names,
                           ArrayRef<Value> newBuffers) {
    for (auto [p, entry] : llvm::enumerate(params)) {
      results.push_back(out.params[p]);
      names.push_back({entry.name, "param"});
    }
    for (auto [b, updated] : llvm::enumerate(newBuffers)) {
      results.push_back(updated);
      names.push_back({buffers[b].name, "buffer"});
    }
    unsigned s = 0;
    for (auto &entry : params)
      for (StringRef suffix : stateNames) {
        results.push_back(out.optimizerState[s++]);
        names.push_back({(entry.name + "." + suffix).str(), "optimizer"});
      }
    results.push_back(out.step);
    names.push_back({"step", "step"});
    results.push_back(out.foundInf);
    names.push_back({"found_inf", "found_inf"});
    results.push_back(out.nonfinite);
    names.push_back({"nonfinite", "nonfinite"});
    results.push_back(out.lr);
    names.push_back({"lr", "lr"});
  };

  // @train_step.
  UpdateInputs in;
  for (unsigned i = 0; i < numParams; ++i)
    in.params.push_back(step.getArgument(i));
  SmallVector<Value> bufferArgs;
  for (unsigned i = 0; i < numBuffers; ++i)
    bufferArgs.push_back(step.getArgument(numParams + i));
  addStateArguments(step, numParams + numBuffers, in);
  OpBuilder builder(ret);
  GradientBuilder gb(builder, step.getLoc());
  // Training-mode Dropout draws its masks from the step number and the
  // replica index (an argument after the step).
  Value stepCounter;
  auto getStepCounter = [&] {
    if (!stepCounter)
      stepCounter = withReplica(
          step, in.step, cast<BlockArgument>(in.step).getArgNumber() + 1);
    return stepCounter;
  };
  if (failed(lowerTrainingDropouts(step, getStepCounter)))
    return failure();
  // The seed of the reverse pass: 1, which amp-loss-scale replaces by the
  // loss scale.
  Value seed = gb.create<GradientSeedOp>({});
  FailureOr<SmallVector<Value>> grads =
      buildGradients(body, loss, seed, in.params);
  if (failed(grads))
    return failure();
  in.grads = *grads;
  FailureOr<UpdateResults> out = buildUpdate(gb, options, in);
  if (failed(out))
    return failure();
  SmallVector<Value> newBuffers;
  for (unsigned b = 0; b < numBuffers; ++b)
    newBuffers.push_back(gb.castLike(bufferUpdates[b], bufferArgs[b]));
  SmallVector<Value> results{loss};
  SmallVector<std::pair<std::string, StringRef>> names{{"loss", "loss"}};
  updateResults(*out, results, names, newBuffers);
  if (gb.hasFailed() || llvm::any_of(results, [](Value v) { return !v; }))
    return failure();
  setResults(step, results, names);

  if (options.splitStep) {
    // @compute_gradients(params, buffers, grads, grad_scale, inputs,
    //                    labels) -> (loss, buffers, grads + d(scale loss)).
    Block &cbody = compute.getBody().front();
    auto cret = cast<func::ReturnOp>(cbody.getTerminator());
    Value closs = cret.getOperand(0);
    SmallVector<Value> cbuffers(cret.getOperands().drop_front());
    SmallVector<Value> cparams, accumulators;
    for (unsigned i = 0; i < numParams; ++i)
      cparams.push_back(compute.getArgument(i));
    unsigned index = numParams + numBuffers;
    for (unsigned p = 0; p < numParams; ++p)
      accumulators.push_back(insertStateArgument(compute, index++,
                                                 paramTypes[p], gradName(p),
                                                 "grad"));
    Value gradScale = insertStateArgument(compute, index++, scalarF32,
                                          "grad_scale", "grad_scale");
    // With Dropout: the micro-batch number (step * K + k; with K = 1 the
    // masks equal @train_step's).
    Value microBatch;
    auto getMicroBatch = [&] {
      if (!microBatch)
        microBatch = withReplica(
            compute,
            insertStateArgument(compute, index, scalarI64, "dropout_counter",
                                "dropout_counter"),
            index + 1);
      return microBatch;
    };
    if (failed(lowerTrainingDropouts(compute, getMicroBatch)))
      return failure();
    OpBuilder cb(cret);
    GradientBuilder cgb(cb, compute.getLoc());
    FailureOr<SmallVector<Value>> cgrads =
        buildGradients(cbody, closs, gradScale, cparams);
    if (failed(cgrads))
      return failure();
    SmallVector<Value> cresults{closs};
    SmallVector<std::pair<std::string, StringRef>> cnames{{"loss", "loss"}};
    for (auto [b, entry] : llvm::enumerate(buffers)) {
      cresults.push_back(
          cgb.castLike(cbuffers[b], compute.getArgument(numParams + b)));
      cnames.push_back({entry.name, "buffer"});
    }
    for (unsigned p = 0; p < numParams; ++p) {
      cresults.push_back(cgb.add(accumulators[p], (*cgrads)[p]));
      cnames.push_back({gradName(p), "grad"});
    }
    if (cgb.hasFailed())
      return failure();
    setResults(compute, cresults, cnames);

    // @apply_gradients(params, optimizer, scaler, step, grads, found_inf)
    //   -> (params, optimizer, scaler, step, found_inf, nonfinite, lr).
    OpBuilder mb(context);
    mb.setInsertionPointAfter(step);
    auto apply = mb.create<func::FuncOp>(
        step.getLoc(), "apply_gradients", FunctionType::get(context, {}, {}));
    Block *ablock = apply.addEntryBlock();
    OpBuilder ab = OpBuilder::atBlockEnd(ablock);
    ab.create<func::ReturnOp>(step.getLoc());
    UpdateInputs ain;
    for (auto [p, entry] : llvm::enumerate(params))
      ain.params.push_back(
          insertStateArgument(apply, p, paramTypes[p], entry.name, "param"));
    unsigned aindex = addStateArguments(apply, numParams, ain);
    for (unsigned p = 0; p < numParams; ++p)
      ain.grads.push_back(insertStateArgument(apply, aindex++, paramTypes[p],
                                              gradName(p), "grad"));
    ain.externalFoundInf = insertStateArgument(
        apply, aindex++, RankedTensorType::get({}, Float32Type::get(context)),
        "found_inf", "found_inf");
    OpBuilder abuilder(ablock->getTerminator());
    GradientBuilder agb(abuilder, apply.getLoc());
    FailureOr<UpdateResults> aout = buildUpdate(agb, options, ain);
    if (failed(aout))
      return failure();
    SmallVector<Value> aresults;
    SmallVector<std::pair<std::string, StringRef>> anames;
    updateResults(*aout, aresults, anames, /*newBuffers=*/{});
    setResults(apply, aresults, anames);
  }

  // The state's initial values, in argument order.
  for (auto [p, entry] : llvm::enumerate(params))
    for (StringRef suffix : stateNames)
      stateInit.push_back({(entry.name + "." + suffix).str(), "optimizer",
                           splat(cast<RankedTensorType>(paramTypes[p]), 0.0)});
  stateInit.push_back({"step", "step", splat(scalarI64, 0.0)});

  // Describe the program for drivers (amp-run) and readers; amp-loss-scale
  // updates the mode.
  NamedAttrList info;
  info.set("loss_scale", StringAttr::get(context, "none"));
  module->setAttr(kTrainAttrName, info.getDictionary(context));
  return success();
}

void TrainStepBuilder::buildInitialState() {
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(module.getBody());
  SmallVector<StateEntry> all(params);
  all.append(buffers);
  all.append(stateInit);
  SmallVector<Type> types;
  for (const StateEntry &entry : all)
    types.push_back(entry.init.getType());
  Location loc = module.getLoc();
  auto func = builder.create<func::FuncOp>(
      loc, "initial_state", FunctionType::get(context, {}, types));
  Block *block = func.addEntryBlock();
  builder.setInsertionPointToStart(block);
  SmallVector<Value> values;
  for (const StateEntry &entry : all)
    values.push_back(builder.create<ConstantOp>(loc, entry.init));
  builder.create<func::ReturnOp>(loc, values);
  for (auto [i, entry] : llvm::enumerate(all)) {
    func.setResultAttr(i, "amp.name", StringAttr::get(context, entry.name));
    func.setResultAttr(i, kRoleAttrName, StringAttr::get(context, entry.role));
  }
}

LogicalResult TrainStepBuilder::runPasses(
    function_ref<void(OpPassManager &)> add) {
  if (runner) {
    OpPassManager pm(ModuleOp::getOperationName());
    add(pm);
    return runner(pm, module);
  }
  PassManager pm(context);
  // The tools' --mlir-print-ir-*, --mlir-timing, ... apply here too.
  (void)applyPassManagerCLOptions(pm);
  add(pm);
  return pm.run(module);
}

LogicalResult
mlir::amp::training::buildTrainStep(ModuleOp module,
                                    const TrainStepOptions &options,
                                    const PipelineRunner &runner) {
  return TrainStepBuilder(module, options, runner).build();
}

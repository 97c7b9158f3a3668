//===- TrainPlanTest.cpp - matching a split train step's artifacts --------===//

#include "amp_gpu/TrainPlan.h"

#include <gtest/gtest.h>

using namespace amp_gpu;

namespace {

TensorSignature sig(const std::string &name, std::vector<int64_t> shape,
                    DType dtype = DType::F32) {
  TensorSignature t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

/// The signatures amp-opt gives a model with parameters w, b, a BatchNorm
/// mean and counter, momentum SGD and dynamic loss scaling.
struct Step {
  Artifact init, compute, apply;
  Step() {
    std::vector<TensorSignature> params = {sig("w", {4, 3}), sig("b", {3})};
    std::vector<TensorSignature> buffers = {sig("bn.mean", {3}),
                                            sig("bn.count", {}, DType::I64)};
    std::vector<TensorSignature> optimizer = {
        sig("w.momentum", {4, 3}), sig("b.momentum", {3}),
        sig("loss_scale", {}), sig("growth_tracker", {}, DType::I64),
        sig("step", {}, DType::I64)};
    for (auto *list : {&params, &buffers, &optimizer})
      for (const TensorSignature &t : *list)
        init.outputs.push_back(t);
    compute.inputs = params;
    for (const TensorSignature &t : buffers)
      compute.inputs.push_back(t);
    compute.inputs.push_back(sig("w.grad", {4, 3}));
    compute.inputs.push_back(sig("b.grad", {3}));
    compute.inputs.push_back(sig("grad_scale", {}));
    compute.inputs.push_back(sig("dropout_counter", {}, DType::I64));
    compute.inputs.push_back(sig("dropout_replica", {}, DType::I64));
    compute.inputs.push_back(sig("x", {2, 4}));
    compute.inputs.push_back(sig("labels", {2}, DType::I64));
    compute.outputs = {sig("loss", {})};
    for (const TensorSignature &t : buffers)
      compute.outputs.push_back(t);
    compute.outputs.push_back(sig("b.grad", {3}));
    compute.outputs.push_back(sig("w.grad", {4, 3}));
    apply.inputs = params;
    for (const TensorSignature &t : optimizer)
      apply.inputs.push_back(t);
    apply.inputs.push_back(sig("w.grad", {4, 3}));
    apply.inputs.push_back(sig("b.grad", {3}));
    apply.inputs.push_back(sig("found_inf", {}));
    apply.outputs = params;
    for (const TensorSignature &t : optimizer)
      apply.outputs.push_back(t);
    apply.outputs.push_back(sig("found_inf", {}));
    apply.outputs.push_back(sig("nonfinite", {2}));
    apply.outputs.push_back(sig("lr", {}));
  }
};

const TrainPlan::State *findState(const TrainPlan &plan,
                                  const std::string &name) {
  for (const TrainPlan::State &s : plan.state)
    if (s.name == name)
      return &s;
  return nullptr;
}

TEST(TrainPlan, MatchesTheThreeArtifacts) {
  Step step;
  TrainPlan plan;
  std::string error;
  ASSERT_TRUE(planTraining(&step.init, step.compute, step.apply, plan, error))
      << error;
  EXPECT_EQ(plan.state.size(), 9u);
  const TrainPlan::State *w = findState(plan, "w");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->computeInput, 0);
  EXPECT_EQ(w->applyInput, 0);
  EXPECT_EQ(w->applyOutput, 0);
  EXPECT_EQ(w->computeOutput, -1);
  EXPECT_EQ(w->initOutput, 0);
  EXPECT_FALSE(w->averaged);
  // Buffers: compute's state; the float one is averaged over the ranks.
  const TrainPlan::State *mean = findState(plan, "bn.mean");
  ASSERT_TRUE(mean);
  EXPECT_EQ(mean->computeInput, 2);
  EXPECT_EQ(mean->computeOutput, 1);
  EXPECT_EQ(mean->applyInput, -1);
  EXPECT_TRUE(mean->averaged);
  const TrainPlan::State *count = findState(plan, "bn.count");
  ASSERT_TRUE(count);
  EXPECT_FALSE(count->averaged);
  const TrainPlan::State *momentum = findState(plan, "w.momentum");
  ASSERT_TRUE(momentum);
  EXPECT_EQ(momentum->computeInput, -1);
  EXPECT_EQ(momentum->applyInput, 2);
  // The flat buffer: w.grad (12), b.grad (3) summed; bn.mean (3) and the
  // loss averaged.
  ASSERT_EQ(plan.gradients.size(), 2u);
  EXPECT_EQ(plan.gradients[0].name, "w.grad");
  EXPECT_EQ(plan.gradients[0].flatOffset, 0u);
  EXPECT_EQ(plan.gradients[0].computeOutput, 4);
  EXPECT_EQ(plan.gradients[0].applyInput, 7);
  EXPECT_EQ(plan.gradients[1].flatOffset, 12u);
  EXPECT_EQ(plan.summedCount, 15u);
  EXPECT_EQ(mean->flatOffset, 15u);
  EXPECT_EQ(plan.lossOffset, 18u);
  EXPECT_EQ(plan.averagedCount, 4u);
  EXPECT_EQ(plan.flatBytes(), 19u * 4);
  EXPECT_EQ(plan.dataInput, 9);
  EXPECT_EQ(plan.labelsInput, 10);
  EXPECT_EQ(plan.gradScaleInput, 6);
  EXPECT_EQ(plan.dropoutCounterInput, 7);
  EXPECT_EQ(plan.dropoutReplicaInput, 8);
  EXPECT_EQ(plan.lossOutput, 0);
  EXPECT_EQ(plan.foundInfInput, 9);
  EXPECT_EQ(plan.foundInfOutput, 7);
  EXPECT_EQ(plan.microBatch, 2);
  EXPECT_EQ(plan.state[plan.lossScaleState].name, "loss_scale");
  EXPECT_EQ(plan.state[plan.stepState].name, "step");
  // Without the init artifact (a state file instead).
  ASSERT_TRUE(planTraining(nullptr, step.compute, step.apply, plan, error))
      << error;
  EXPECT_EQ(findState(plan, "w")->initOutput, -1);
}

std::string planError(const Step &step, bool withInit = true) {
  TrainPlan plan;
  std::string error;
  EXPECT_FALSE(planTraining(withInit ? &step.init : nullptr, step.compute,
                            step.apply, plan, error));
  return error;
}

TEST(TrainPlan, RefusesArtifactsThatDoNotBelongTogether) {
  {
    Step step; // swapped
    std::swap(step.compute, step.apply);
    EXPECT_NE(planError(step).find("not @compute_gradients"),
              std::string::npos);
  }
  {
    Step step;
    step.apply.inputs.erase(step.apply.inputs.end() - 1); // no found_inf
    EXPECT_NE(planError(step).find("not @apply_gradients"), std::string::npos);
  }
  {
    Step step; // another model's parameter shape
    step.compute.inputs[0].shape = {5, 3};
    EXPECT_NE(planError(step).find("parameter 'w' is f32[5, 3]"),
              std::string::npos);
  }
  {
    Step step; // a gradient the apply artifact does not take
    step.apply.inputs.erase(step.apply.inputs.begin() + 8); // b.grad
    EXPECT_NE(planError(step).find("gradient 'b.grad'"), std::string::npos);
  }
  {
    Step step; // the init artifact lacks a state tensor
    step.init.outputs.pop_back();
    EXPECT_NE(planError(step).find("has no 'step'"), std::string::npos);
  }
  {
    Step step; // ... or has it in another type
    step.init.outputs[0].dtype = DType::F16;
    EXPECT_NE(planError(step).find("state 'w' is f16[4, 3] in the "
                                   "@initial_state artifact"),
              std::string::npos);
  }
  {
    Step step; // an init artifact with inputs
    step.init.inputs.push_back(sig("x", {2, 4}));
    EXPECT_NE(planError(step).find("takes inputs"), std::string::npos);
  }
  {
    Step step; // two data inputs
    step.compute.inputs.push_back(sig("mask", {2, 4}));
    EXPECT_NE(planError(step).find("two inputs"), std::string::npos);
  }
  {
    Step step; // data and labels disagree on the batch
    step.compute.inputs[10].shape = {3};
    EXPECT_NE(planError(step).find("first (batch) dimension"),
              std::string::npos);
  }
  {
    Step step; // gradients of two types cannot share one all-reduce
    for (auto *list :
         {&step.compute.inputs, &step.compute.outputs, &step.apply.inputs,
          &step.apply.outputs, &step.init.outputs})
      for (TensorSignature &t : *list)
        if (t.name == "b" || t.name == "b.grad" || t.name == "b.momentum")
          t.dtype = DType::F64;
    EXPECT_NE(planError(step).find("gradients of different types"),
              std::string::npos);
  }
  {
    Step step; // an apply output that is not state
    step.apply.outputs.push_back(sig("extra", {}));
    EXPECT_NE(planError(step).find("apply output 'extra'"), std::string::npos);
  }
}

TEST(TrainPlan, BatchSplit) {
  std::string error;
  EXPECT_TRUE(checkBatchSplit(8, 2, 4, error));
  EXPECT_TRUE(checkBatchSplit(4, 1, 4, error));
  EXPECT_FALSE(checkBatchSplit(7, 2, 4, error));
  EXPECT_NE(error.find("does not split evenly over 2 ranks"),
            std::string::npos);
  EXPECT_FALSE(checkBatchSplit(8, 1, 4, error));
  EXPECT_NE(error.find("compile it with --static-batch 8"), std::string::npos);
  EXPECT_FALSE(checkBatchSplit(0, 1, 4, error));
}

} // namespace

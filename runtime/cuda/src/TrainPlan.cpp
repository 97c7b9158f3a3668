//===- TrainPlan.cpp - a split train step's artifacts, matched ------------===//

#include "amp_gpu/TrainPlan.h"

#include <map>

namespace amp_gpu {
namespace {

std::string describe(DType dtype, const std::vector<int64_t> &shape) {
  std::string text = dtypeName(dtype);
  text += "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string describe(const TensorSignature &t) {
  return describe(t.dtype, t.shape);
}

bool sameType(const TensorSignature &a, const TensorSignature &b) {
  return a.dtype == b.dtype && a.shape == b.shape;
}

bool isFloat(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16 ||
         type == DType::F64;
}

uint64_t elementCount(const std::vector<int64_t> &shape) {
  uint64_t count = 1;
  for (int64_t d : shape)
    count *= uint64_t(d);
  return count;
}

using Index = std::map<std::string, int>;

Index indexByName(const std::vector<TensorSignature> &list) {
  Index index;
  for (size_t i = 0; i < list.size(); ++i)
    index.emplace(list[i].name, int(i));
  return index;
}

int find(const Index &index, const std::string &name) {
  auto it = index.find(name);
  return it == index.end() ? -1 : it->second;
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() > suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

bool planTraining(const Artifact *init, const Artifact &compute,
                  const Artifact &apply, TrainPlan &plan, std::string &error) {
  plan = TrainPlan();
  auto fail = [&](const std::string &message) {
    error = message;
    return false;
  };
  Index computeIn = indexByName(compute.inputs);
  Index computeOut = indexByName(compute.outputs);
  Index applyIn = indexByName(apply.inputs);
  Index applyOut = indexByName(apply.outputs);
  Index initOut;
  if (init) {
    if (!init->inputs.empty())
      return fail("the @initial_state artifact takes inputs ('" +
                  init->inputs[0].name +
                  "'): compile it with --amp-cuda-entry=initial_state");
    initOut = indexByName(init->outputs);
  }
  if (find(computeIn, "grad_scale") < 0 || find(computeOut, "loss") < 0)
    return fail("the compute artifact is not @compute_gradients (no "
                "'grad_scale' input or no 'loss' output): compile it with "
                "--train --split-step --amp-cuda-entry=compute_gradients");
  if (find(applyIn, "found_inf") < 0 || find(applyOut, "found_inf") < 0)
    return fail("the apply artifact is not @apply_gradients (no 'found_inf' "
                "input and output): compile it with --train --split-step "
                "--amp-cuda-entry=apply_gradients");

  // @apply_gradients: its state is what it reads and gives back by name;
  // its other inputs are the gradients and found_inf.
  std::map<std::string, int> stateOf;
  auto addState = [&](const TensorSignature &t) {
    TrainPlan::State s;
    s.name = t.name;
    s.dtype = t.dtype;
    s.shape = t.shape;
    s.bytes = t.byteSize();
    stateOf[t.name] = int(plan.state.size());
    plan.state.push_back(s);
    return &plan.state.back();
  };
  for (size_t i = 0; i < apply.inputs.size(); ++i) {
    const TensorSignature &t = apply.inputs[i];
    if (t.name == "found_inf") {
      plan.foundInfInput = int(i);
      continue;
    }
    if (endsWith(t.name, ".grad"))
      continue; // matched below
    int out = find(applyOut, t.name);
    if (out < 0)
      return fail("apply input '" + t.name +
                  "' is neither a gradient nor returned updated (not an "
                  "@apply_gradients artifact?)");
    if (!sameType(t, apply.outputs[out]))
      return fail("apply input '" + t.name + "' is " + describe(t) +
                  " but its update is " + describe(apply.outputs[out]));
    TrainPlan::State *s = addState(t);
    s->applyInput = int(i);
    s->applyOutput = out;
  }
  plan.foundInfOutput = find(applyOut, "found_inf");
  plan.nonfiniteOutput = find(applyOut, "nonfinite");
  plan.lrOutput = find(applyOut, "lr");
  for (size_t i = 0; i < apply.outputs.size(); ++i) {
    const std::string &name = apply.outputs[i].name;
    if (name != "found_inf" && name != "nonfinite" && name != "lr" &&
        !stateOf.count(name))
      return fail("apply output '" + name + "' is not an input of it");
  }
  if (plan.foundInfOutput >= 0 &&
      (apply.outputs[plan.foundInfOutput].dtype != DType::F32 ||
       !apply.outputs[plan.foundInfOutput].shape.empty()))
    return fail("apply output 'found_inf' must be f32[]");

  // @compute_gradients: parameters (apply's state), buffers (returned by
  // name), gradient accumulators, the scale, Dropout's counters, labels,
  // and one data input.
  for (size_t i = 0; i < compute.inputs.size(); ++i) {
    const TensorSignature &t = compute.inputs[i];
    const std::string &name = t.name;
    if (name == "grad_scale")
      plan.gradScaleInput = int(i);
    else if (name == "labels")
      plan.labelsInput = int(i);
    else if (name == "dropout_counter")
      plan.dropoutCounterInput = int(i);
    else if (name == "dropout_replica")
      plan.dropoutReplicaInput = int(i);
    else if (endsWith(name, ".grad")) {
      std::string param = name.substr(0, name.size() - 5);
      auto s = stateOf.find(param);
      int out = find(computeOut, name), in = find(applyIn, name);
      if (s == stateOf.end() || out < 0 || in < 0)
        return fail("gradient '" + name + "' has no parameter '" + param +
                    "' in the apply artifact, or is not a compute output "
                    "and an apply input (artifacts of different programs?)");
      const TrainPlan::State &p = plan.state[s->second];
      if (t.dtype != p.dtype || t.shape != p.shape ||
          !sameType(t, compute.outputs[out]) || !sameType(t, apply.inputs[in]))
        return fail("gradient '" + name + "' is " + describe(t) +
                    " in the compute artifact; its parameter, its output "
                    "and the apply artifact's input must be the same");
      TrainPlan::Gradient g;
      g.name = name;
      g.count = elementCount(t.shape);
      g.bytes = t.byteSize();
      g.computeInput = int(i);
      g.computeOutput = out;
      g.applyInput = in;
      plan.gradients.push_back(g);
    } else if (auto s = stateOf.find(name); s != stateOf.end()) {
      TrainPlan::State &p = plan.state[s->second];
      if (!sameType(t, apply.inputs[p.applyInput]))
        return fail("parameter '" + name + "' is " + describe(t) +
                    " in the compute artifact but " +
                    describe(apply.inputs[p.applyInput]) +
                    " in the apply artifact (artifacts of different "
                    "programs?)");
      p.computeInput = int(i);
    } else if (int out = find(computeOut, name); out >= 0) {
      if (!sameType(t, compute.outputs[out]))
        return fail("buffer '" + name + "' is " + describe(t) + " in but " +
                    describe(compute.outputs[out]) +
                    " out of the compute artifact");
      TrainPlan::State *b = addState(t);
      b->computeInput = int(i);
      b->computeOutput = out;
      b->averaged = isFloat(t.dtype);
    } else if (plan.dataInput < 0)
      plan.dataInput = int(i);
    else
      return fail("the compute artifact has two inputs that are not state, "
                  "gradients or labels ('" +
                  compute.inputs[plan.dataInput].name + "', '" + name +
                  "'); amp trains models with one input");
  }
  if (plan.dataInput < 0 || plan.labelsInput < 0)
    return fail("the compute artifact has no data input or no 'labels'");
  for (const TrainPlan::State &s : plan.state)
    if (s.applyInput >= 0 && s.computeInput < 0 &&
        find(applyIn, s.name + ".grad") >= 0)
      return fail("parameter '" + s.name +
                  "' of the apply artifact is not a compute input");
  for (size_t i = 0; i < apply.inputs.size(); ++i)
    if (endsWith(apply.inputs[i].name, ".grad") &&
        find(computeIn, apply.inputs[i].name) < 0)
      return fail("apply input '" + apply.inputs[i].name +
                  "' is not a gradient of the compute artifact");
  for (size_t i = 0; i < compute.outputs.size(); ++i) {
    const std::string &name = compute.outputs[i].name;
    if (name != "loss" && find(computeIn, name) < 0)
      return fail("compute output '" + name + "' is not an input of it");
  }
  if (plan.gradients.empty())
    return fail("the compute artifact has no gradients");

  const TensorSignature &data = compute.inputs[plan.dataInput];
  const TensorSignature &labels = compute.inputs[plan.labelsInput];
  if (data.shape.empty() || labels.shape.empty() ||
      data.shape[0] != labels.shape[0])
    return fail("the data input '" + data.name + "' " + describe(data) +
                " and 'labels' " + describe(labels) +
                " must share their first (batch) dimension");
  plan.microBatch = data.shape[0];
  const TensorSignature &loss = compute.outputs[find(computeOut, "loss")];
  plan.lossOutput = find(computeOut, "loss");
  if (!loss.shape.empty() || !isFloat(loss.dtype))
    return fail("compute output 'loss' must be a float scalar, not " +
                describe(loss));
  const TensorSignature &scale = compute.inputs[plan.gradScaleInput];
  if (scale.dtype != DType::F32 || !scale.shape.empty())
    return fail("compute input 'grad_scale' must be f32[]");

  // The flat buffer: one type for the gradients, the averaged buffers and
  // the loss (amp's master weights are fp32).
  plan.flatType = plan.state[stateOf[plan.gradients[0].name.substr(
                                 0, plan.gradients[0].name.size() - 5)]]
                      .dtype;
  for (TrainPlan::Gradient &g : plan.gradients) {
    const TensorSignature &t = compute.inputs[g.computeInput];
    if (t.dtype != plan.flatType)
      return fail("gradients of different types ('" + plan.gradients[0].name +
                  "' " + dtypeName(plan.flatType) + ", '" + g.name + "' " +
                  dtypeName(t.dtype) + "): one all-reduce needs one type");
    g.flatOffset = plan.summedCount;
    plan.summedCount += g.count;
  }
  if (!isFloat(plan.flatType))
    return fail("gradients of type " + std::string(dtypeName(plan.flatType)));
  for (TrainPlan::State &s : plan.state) {
    if (!s.averaged)
      continue;
    if (s.dtype != plan.flatType)
      return fail("buffer '" + s.name + "' is " + dtypeName(s.dtype) +
                  " but the gradients are " + dtypeName(plan.flatType));
    s.flatOffset = plan.summedCount + plan.averagedCount;
    plan.averagedCount += elementCount(s.shape);
  }
  plan.lossOffset = plan.summedCount + plan.averagedCount;
  plan.averagedCount += 1;

  if (auto it = stateOf.find("loss_scale"); it != stateOf.end())
    plan.lossScaleState = it->second;
  if (auto it = stateOf.find("step"); it != stateOf.end())
    plan.stepState = it->second;
  if (plan.lossScaleState >= 0 &&
      (plan.state[plan.lossScaleState].dtype != DType::F32 ||
       !plan.state[plan.lossScaleState].shape.empty()))
    return fail("state 'loss_scale' must be f32[]");

  if (init) {
    for (TrainPlan::State &s : plan.state) {
      int out = find(initOut, s.name);
      if (out < 0)
        return fail("the @initial_state artifact has no '" + s.name + "'");
      const TensorSignature &t = init->outputs[out];
      if (t.dtype != s.dtype || t.shape != s.shape)
        return fail("state '" + s.name + "' is " + describe(t) +
                    " in the @initial_state artifact but " +
                    describe(s.dtype, s.shape) +
                    " in the step (artifacts of different programs?)");
      s.initOutput = out;
    }
  }
  return true;
}

bool checkBatchSplit(int64_t globalBatch, int ranks, int64_t microBatch,
                     std::string &error) {
  if (globalBatch < 1 || ranks < 1) {
    error = "--batch-size and the number of ranks must be positive";
    return false;
  }
  if (globalBatch % ranks != 0) {
    error = "--batch-size " + std::to_string(globalBatch) +
            " (the global batch) does not split evenly over " +
            std::to_string(ranks) + " ranks";
    return false;
  }
  if (globalBatch / ranks != microBatch) {
    error = "--batch-size " + std::to_string(globalBatch) + " over " +
            std::to_string(ranks) + " rank(s) gives " +
            std::to_string(globalBatch / ranks) +
            " rows per rank, but the compute artifact was compiled for " +
            std::to_string(microBatch) + " (compile it with --static-batch " +
            std::to_string(globalBatch / ranks) + ")";
    return false;
  }
  return true;
}

} // namespace amp_gpu

//===- Passes.td - amp training passes ---------------------*- tablegen -*-===//

#ifndef AMP_TRAINING_PASSES_TD
#define AMP_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpAutodiff : Pass<"amp-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode gradient of a function (GradientOpInterface)";
  let description = [{
    For the function `function` (default `main`), whose first result is a
    scalar float (rank 0 or one element), adds
    `@<function>_grad(same arguments) -> (that result, d result / d arg for
    every float argument)`. The reverse pass is the one train steps use
    (lib/Training/Autodiff.cpp): an activity analysis, then each op's rule
    from GradientOpInterface, seeded with 1. Gradient results are named
    `<argument name>.grad` (`amp.name`). An active op without a rule is an
    error naming the op and its node.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The function to differentiate">,
  ];
}

def AmpLossScale : Pass<"amp-loss-scale", "::mlir::ModuleOp"> {
  let summary = "Add static or dynamic loss scaling to a training program";
  let description = [{
    Turns an unscaled training program (what `amp-opt --train
    --loss-scale=none` writes) into a loss-scaled one, the way
    torch.amp.GradScaler scales a PyTorch train step:

    - the scaler state (`loss_scale`, and for `dynamic` `growth_tracker` and,
      with hysteresis, `hysteresis_left`) becomes arguments and results with
      `amp.role = "scaler"`, before `step`, and initial values in
      `@initial_state`;
    - the reverse pass of `@train_step` is seeded with the loss scale
      instead of 1 (`amp.gradient_seed`);
      `@compute_gradients` is seeded by its caller's `grad_scale`;
    - the multi-tensor check (`amp.multi_tensor_unscale_check`) of
      `@train_step` and `@apply_gradients` multiplies the gradients by
      1/scale;
    - when it finds an Inf or NaN, every parameter, buffer, optimizer-state
      value and `step` comes out bit-identical to its input (so the
      learning-rate schedule does not advance);
    - the scale is updated as GradScaler does (`_amp_update_scale_`), plus
      DeepSpeed-style hysteresis and min/max clamps.

    `amp-opt --train` runs it after autocast (the default for fp16 is
    `dynamic`); the options have the meaning of the `--loss-scale*` flags.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"dynamic\"",
           "dynamic or static">,
    Option<"scale", "scale", "double", /*default=*/"65536.0",
           "The (initial) loss scale">,
    Option<"growth", "growth", "double", /*default=*/"2.0",
           "Dynamic: factor after `interval` clean steps">,
    Option<"backoff", "backoff", "double", /*default=*/"0.5",
           "Dynamic: factor after an overflow">,
    Option<"interval", "interval", "int64_t", /*default=*/"2000",
           "Dynamic: clean steps between growths">,
    Option<"hysteresis", "hysteresis", "int64_t", /*default=*/"1",
           "Dynamic: back off after this many overflows in a row">,
    Option<"minScale", "min", "double", /*default=*/"0.0",
           "Dynamic: the smallest scale">,
    Option<"maxScale", "max", "double",
           /*default=*/"3.4028234663852886e38", "Dynamic: the largest scale">,
  ];
}

#endif // AMP_TRAINING_PASSES_TD

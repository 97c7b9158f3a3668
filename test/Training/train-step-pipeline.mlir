// amp-train-step, the train-step builder as a named pipeline: the same
// options as amp-opt --train (declared once, TrainStepOptions::bind and
// FrontEndOptions::bind) give the same program, byte for byte.
//
// RUN: amp-opt %S/Inputs/mlp.mlir --train --loss=mse --optimizer=adamw --lr=0.01 --amp-type=bf16 --loss-scale=static:128 --split-step -o %t.tool.mlir 2>/dev/null
// RUN: amp-opt %S/Inputs/mlp.mlir --pass-pipeline='builtin.module(amp-train-step{loss=mse optimizer=adamw lr=0.01 type=bf16 loss-scale=static:128 split-step=true})' -o %t.pipeline.mlir
// RUN: diff %t.tool.mlir %t.pipeline.mlir
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --optimizer=momentum --nesterov --lr-schedule=cosine --warmup-steps=10 --total-steps=100 --clip-grad-norm=1.0 -o %t.tool2.mlir 2>/dev/null
// RUN: amp-opt %S/Inputs/mlp.mlir --pass-pipeline='builtin.module(amp-train-step{opt-level=0 optimizer=momentum nesterov=true lr-schedule=cosine warmup-steps=10 total-steps=100 clip-grad-norm=1.0})' -o %t.pipeline2.mlir
// RUN: diff %t.tool2.mlir %t.pipeline2.mlir
// RUN: amp-opt %S/Inputs/mlp.mlir --pass-pipeline='builtin.module(amp-train-step)' | FileCheck %s
// RUN: not amp-opt %S/Inputs/mlp.mlir --pass-pipeline='builtin.module(amp-train-step{loss-scale=sometimes})' 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not amp-opt %S/Inputs/mlp.mlir --pass-pipeline='builtin.module(amp-train-step{optimizer=adam})' 2>&1 | FileCheck %s --check-prefix=CHOICE

// The defaults: SGD, cross-entropy, fp16 with dynamic loss scaling.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: amp.role = "scaler"
// CHECK: amp.softmax_cross_entropy_loss
// CHECK-LABEL: func.func @initial_state(
// CHECK: amp.constant dense<6.553600e+04> : tensor<f32>

// MODE: error: --loss-scale must be dynamic, none or static:S, got 'sometimes'
// CHOICE: Cannot find option named 'adam'!

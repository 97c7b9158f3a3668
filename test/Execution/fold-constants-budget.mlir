// amp-fold-constants' max-bytes: what one run may materialise (constant
// operands, each counted once, and every result) is bounded; an op over the
// budget stays for run time, and so does everything computed from it.
//
// RUN: amp-opt %s --amp-fold-constants | FileCheck %s --check-prefix=DEFAULT
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-fold-constants{max-bytes=4100})' | FileCheck %s --check-prefix=SMALL
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-fold-constants{max-bytes=4104})' | FileCheck %s --check-prefix=FITS
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-fold-constants{max-bytes=4000})' | FileCheck %s --check-prefix=NONE

// A 32x32 f32 splat (4,096 bytes) summed to a scalar (4 bytes), then
// negated (4 bytes). The default budget (64 MiB) folds both. At 4,100
// bytes the sum fits (4,096 + 4) but its negation does not; at 4,104
// both do. At 4,000 the operand alone is over the budget: nothing folds.
// DEFAULT-LABEL: func.func @splat_sum
// DEFAULT-NOT: amp.reduce_sum
// DEFAULT-NOT: amp.neg
// DEFAULT: amp.constant dense<-5.120000e+02> : tensor<f32>
// SMALL-LABEL: func.func @splat_sum
// SMALL-NOT: amp.reduce_sum
// SMALL: %[[S:.*]] = amp.constant dense<5.120000e+02> : tensor<f32>
// SMALL: amp.neg %[[S]]
// FITS-LABEL: func.func @splat_sum
// FITS-NOT: amp.reduce_sum
// FITS-NOT: amp.neg
// FITS: amp.constant dense<-5.120000e+02> : tensor<f32>
// NONE-LABEL: func.func @splat_sum
// NONE: amp.reduce_sum
// NONE: amp.neg
func.func @splat_sum() -> tensor<f32> {
  %big = amp.constant dense<0.5> : tensor<32x32xf32>
  %none = amp.none
  %s = amp.reduce_sum %big, %none {keepdims = 0 : i64} : (tensor<32x32xf32>, none) -> tensor<f32>
  %n = amp.neg %s : (tensor<f32>) -> tensor<f32>
  return %n : tensor<f32>
}

// Linear - Dropout(0.25, training) - Linear, as a training-mode export has it.
func.func @main(%x: tensor<?x4xf32> {amp.name = "x"}) -> tensor<?x3xf32> {
  %w1 = amp.constant {amp.initializer} dense<0.5> : tensor<5x4xf32> loc("fc1.weight")
  %w2 = amp.constant {amp.initializer} dense<0.25> : tensor<3x5xf32> loc("fc2.weight")
  %ratio = amp.constant dense<0.25> : tensor<f32>
  %train = amp.constant dense<true> : tensor<i1>
  %none = amp.none
  %h = amp.gemm %x, %w1, %none {transB = 1 : i64} : (tensor<?x4xf32>, tensor<5x4xf32>, none) -> tensor<?x5xf32>
  %d, %mask = amp.dropout %h, %ratio, %train {seed = 7 : i64} : (tensor<?x5xf32>, tensor<f32>, tensor<i1>) -> (tensor<?x5xf32>, tensor<?x5xi1>) loc("drop")
  %y = amp.gemm %d, %w2, %none {transB = 1 : i64} : (tensor<?x5xf32>, tensor<3x5xf32>, none) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

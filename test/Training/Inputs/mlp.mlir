func.func @main(%x: tensor<?x4xf32> {amp.name = "x"}) -> (tensor<?x3xf32> {amp.name = "y"}) {
  %w1 = amp.constant {amp.initializer} dense<0.5> : tensor<5x4xf32> loc("fc1.weight")
  %b1 = amp.constant {amp.initializer} dense<0.1> : tensor<5xf32> loc("fc1.bias")
  %w2 = amp.constant {amp.initializer} dense<0.25> : tensor<3x5xf32> loc("fc2.weight")
  %none = amp.none
  %h = amp.gemm %x, %w1, %b1 {transB = 1 : i64} : (tensor<?x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<?x5xf32>
  %r = amp.relu %h : (tensor<?x5xf32>) -> tensor<?x5xf32>
  %y = amp.gemm %r, %w2, %none {transB = 1 : i64} : (tensor<?x5xf32>, tensor<3x5xf32>, none) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

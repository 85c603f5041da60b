// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda" | FileCheck %s --check-prefix=CUDA
// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda" | bertc-opt -bertc-lower-to-target="target=cpu" | FileCheck %s --check-prefix=CPU
// RUN: bertc-opt %s -bertc-lower-to-target | FileCheck %s --check-prefix=CPU
// RUN: not bertc-opt %s -bertc-lower-to-target="target=tpu" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The cuda target's attention backward runs the forward again first; the forward itself
// is the same on both targets.
// CUDA-LABEL: func.func @attention
// CUDA: bert.attention %{{.*}} {dropout = 1.000000e-01 : f32, heads = 2 : i64, stream = 1 : i32}
// CUDA: bert.attention_grad %{{.*}} {dropout = 1.000000e-01 : f32, heads = 2 : i64, recompute_forward, stream = 1 : i32}

// The cpu target's recomputes only the probabilities: lowering for it removes the mark.
// CPU-LABEL: func.func @attention
// CPU: bert.attention %{{.*}} {dropout = 1.000000e-01 : f32, heads = 2 : i64, stream = 1 : i32}
// CPU: bert.attention_grad %{{.*}} {dropout = 1.000000e-01 : f32, heads = 2 : i64, stream = 1 : i32}

// UNKNOWN: error: -bertc-lower-to-target: unknown target 'tpu' (expected cpu or cuda)
func.func @attention(%q: tensor<?x?x8xf32>, %mask: tensor<?x?xi32>, %dy: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %a = bert.attention %q, %q, %q, %mask {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  %dq, %dk, %dv = bert.attention_grad %dy, %q, %q, %q, %mask {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return %dq : tensor<?x?x8xf32>
}

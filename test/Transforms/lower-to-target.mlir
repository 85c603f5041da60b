// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda" | FileCheck %s
// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda" | bertc-opt -bertc-lower-to-target="target=cpu" | FileCheck %s
// RUN: bertc-opt %s -bertc-lower-to-target | FileCheck %s
// RUN: not bertc-opt %s -bertc-lower-to-target="target=tpu" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Attention is the same on both targets: the backward reads the forward's output and lse
// and never runs the forward again, so lowering leaves both ops as they are.
// CHECK-LABEL: func.func @attention
// CHECK: bert.attention %{{.*}} {dropout = 1.000000e-01 : f32, heads = 2 : i64, stream = 1 : i32}
// CHECK: bert.attention_grad %{{.*}} {dropout = 1.000000e-01 : f32, heads = 2 : i64, stream = 1 : i32}

// UNKNOWN: error: -bertc-lower-to-target: unknown target 'tpu' (expected cpu or cuda)
func.func @attention(%q: tensor<?x?x8xf32>, %mask: tensor<?x?xi32>, %dy: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %a, %lse = bert.attention %q, %q, %q, %mask {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  %dq, %dk, %dv = bert.attention_grad %dy, %q, %q, %q, %mask, %a, %lse {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x2x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return %dq : tensor<?x?x8xf32>
}

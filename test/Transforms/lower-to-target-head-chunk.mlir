// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda attention-head-chunk=1" | FileCheck %s --check-prefix=ONE
// RUN: bertc-opt %s -bertc-lower-to-target="target=cpu attention-head-chunk=5" | FileCheck %s --check-prefix=ALL
// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda attention-head-chunk=2" | bertc-opt -bertc-lower-to-target="target=cuda" | FileCheck %s --check-prefix=FUSED
// RUN: not bertc-opt %s -bertc-lower-to-target="target=cuda attention-head-chunk=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// Both ops of an attention get the same head chunk, on either target: one head at a time,
// or at most every head (5 asks for more than the 2 there are).
// ONE: bert.attention {{.*}}head_chunk = 1 : i64
// ONE: bert.attention_grad {{.*}}head_chunk = 1 : i64
// ALL: bert.attention {{.*}}head_chunk = 2 : i64
// ALL: bert.attention_grad {{.*}}head_chunk = 2 : i64
// Lowering again without the option goes back to the fused kernels.
// FUSED-NOT: head_chunk = 2
// NEGATIVE: error: -bertc-lower-to-target: attention-head-chunk -1 is negative

func.func @attention(%q: tensor<?x?x8xf32>, %mask: tensor<?x?xi32>, %dy: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %a, %lse = bert.attention %q, %q, %q, %mask {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  %dq, %dk, %dv = bert.attention_grad %dy, %q, %q, %q, %mask, %a, %lse {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x2x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return %dq : tensor<?x?x8xf32>
}

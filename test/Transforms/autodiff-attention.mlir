// RUN: bertc-opt %s -bertc-autodiff | FileCheck %s --enable-var-scope

// A decoder's attention: 4 query heads over 2 key/value heads, causal. Its gradient op
// carries heads, kv_heads and causal (and the forward's dropout and stream), reads the
// forward's output and lse, and gives dk and dv the key's and value's [batch, seq, 16],
// which flow back into their own projections' gradients.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[K:.*]] = bert.linear %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> tensor<?x?x16xf32>
// CHECK: %[[V:.*]] = bert.linear %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> tensor<?x?x16xf32>
// CHECK: %[[CTX:.*]], %[[LSE:.*]] = bert.attention %[[Q:.*]], %[[K]], %[[V]], %[[MASK:.*]] {causal, dropout = 1.000000e-01 : f32, heads = 4 : i64, kv_heads = 2 : i64, stream = 3 : i32}
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = bert.attention_grad %{{.*}}, %[[Q]], %[[K]], %[[V]], %[[MASK]], %[[CTX]], %[[LSE]] {causal, dropout = 1.000000e-01 : f32, heads = 4 : i64, kv_heads = 2 : i64, stream = 3 : i32} : {{.*}} -> (tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>)
// CHECK-DAG: bert.linear_grad_input %[[DK]], %{{.*}} : (tensor<?x?x16xf32>, tensor<16x32xf32>) -> tensor<?x?x32xf32>
// CHECK-DAG: bert.linear_grad_input %[[DV]], %{{.*}} : (tensor<?x?x16xf32>, tensor<16x32xf32>) -> tensor<?x?x32xf32>
// CHECK-DAG: bert.linear_grad_input %[[DQ]], %{{.*}} : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
module {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %mask = bert.input "attention_mask" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?x?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x32xf32>
    %x = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x32xf32>) -> tensor<?x?x32xf32>
    %wq = bert.param "q.weight" {group = "layer", trainable = true, decay = true, init = "normal"} : tensor<32x32xf32>
    %bq = bert.param "q.bias" {group = "layer", trainable = true, decay = false, init = "zeros"} : tensor<32xf32>
    %wk = bert.param "k.weight" {group = "layer", trainable = true, decay = true, init = "normal"} : tensor<16x32xf32>
    %wv = bert.param "v.weight" {group = "layer", trainable = true, decay = true, init = "normal"} : tensor<16x32xf32>
    %bkv = bert.param "kv.bias" {group = "layer", trainable = false, decay = false, init = "zeros"} : tensor<16xf32>
    %q = bert.linear %x, %wq, %bq : (tensor<?x?x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
    %k = bert.linear %x, %wk, %bkv : (tensor<?x?x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %v = bert.linear %x, %wv, %bkv : (tensor<?x?x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %ctx, %lse = bert.attention %q, %k, %v, %mask {heads = 4 : i64, kv_heads = 2 : i64, causal, dropout = 0.1 : f32, stream = 3 : i32} : (tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?xi32>) -> (tensor<?x?x32xf32>, tensor<?x4x?xf32>)
    %loss = bert.cross_entropy %ctx, %labels : (tensor<?x?x32xf32>, tensor<?x?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

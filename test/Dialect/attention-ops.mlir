// RUN: bertc-opt %s | bertc-opt | FileCheck %s
// Round trip of a decoder's attention: grouped-query heads (kv_heads) and the causal mask,
// forward and gradient; without them (BERT's) neither attribute is printed.

// CHECK-LABEL: func.func @grouped_causal
func.func @grouped_causal(%q: tensor<?x?x32xbf16>, %kv: tensor<?x?x16xbf16>, %mask: tensor<?x?xi32>,
                          %lse: tensor<?x4x?xf32>) {
  // CHECK: bert.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal, dropout = 0.000000e+00 : f32, heads = 4 : i64, kv_heads = 2 : i64, stream = 1 : i32} : (tensor<?x?x32xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>, tensor<?x?xi32>) -> (tensor<?x?x32xbf16>, tensor<?x4x?xf32>)
  %c, %l = bert.attention %q, %kv, %kv, %mask {heads = 4 : i64, kv_heads = 2 : i64, causal, dropout = 0.0 : f32, stream = 1 : i32} : (tensor<?x?x32xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>, tensor<?x?xi32>) -> (tensor<?x?x32xbf16>, tensor<?x4x?xf32>)
  // dk and dv are key/value-shaped.
  // CHECK: bert.attention_grad {{.*}} {causal, dropout = 0.000000e+00 : f32, head_chunk = 2 : i64, heads = 4 : i64, kv_heads = 2 : i64, stream = 1 : i32} : {{.*}} -> (tensor<?x?x32xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>)
  %dq, %dk, %dv = bert.attention_grad %q, %q, %kv, %kv, %mask, %q, %lse {heads = 4 : i64, kv_heads = 2 : i64, causal, head_chunk = 2 : i64, dropout = 0.0 : f32, stream = 1 : i32} : (tensor<?x?x32xbf16>, tensor<?x?x32xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>, tensor<?x?xi32>, tensor<?x?x32xbf16>, tensor<?x4x?xf32>) -> (tensor<?x?x32xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>)
  return
}

// A head dimension that is not hidden / heads of a model (Qwen3's head_dim): 2 heads of 80
// dims over one key/value head, causal only.
// CHECK-LABEL: func.func @multi_query
func.func @multi_query(%q: tensor<2x?x160xf32>, %kv: tensor<2x?x80xf32>, %mask: tensor<2x?xi32>) {
  // CHECK: bert.attention {{.*}} {causal, dropout = 1.000000e-01 : f32, heads = 2 : i64, kv_heads = 1 : i64, stream = 0 : i32}
  %c, %l = bert.attention %q, %kv, %kv, %mask {heads = 2 : i64, kv_heads = 1 : i64, causal, dropout = 0.1 : f32, stream = 0 : i32} : (tensor<2x?x160xf32>, tensor<2x?x80xf32>, tensor<2x?x80xf32>, tensor<2x?xi32>) -> (tensor<2x?x160xf32>, tensor<2x2x?xf32>)
  return
}

// kv_heads = 0 is the default (as many as the heads): not printed.
// CHECK-LABEL: func.func @default_kv_heads
func.func @default_kv_heads(%q: tensor<?x?x8xf32>, %mask: tensor<?x?xi32>) {
  // CHECK: bert.attention {{.*}} {dropout = 0.000000e+00 : f32, heads = 2 : i64, stream = 0 : i32}
  %c, %l = bert.attention %q, %q, %q, %mask {heads = 2 : i64, kv_heads = 0 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  return
}

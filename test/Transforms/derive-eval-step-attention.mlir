// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64" -bertc-derive-eval-step | FileCheck %s

// A decoder's attention in the eval step: dropout off, and the same heads, key/value heads
// and causal mask as in training (the eval step's cross-entropy must score the model that
// trains, which sees no later token).
// CHECK-LABEL: func.func @micro_step() -> tensor<f32>
// CHECK: bert.attention {{.*}}{bert.offsets = array<i64: [[$ATT:[0-9]+]], [[$LSE:[0-9]+]]>, causal, dropout = 1.000000e-01 : f32, heads = 2 : i64, kv_heads = 1 : i64, stream = 1 : i32}
// CHECK-LABEL: func.func @eval_step() -> (tensor<f32>, tensor<?x2xf32>)
// CHECK: bert.attention {{.*}}{bert.offsets = array<i64: [[$ATT]], [[$LSE]]>, causal, dropout = 0.000000e+00 : f32, heads = 2 : i64, kv_heads = 1 : i64, stream = 1 : i32}
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4 : i64, bert.train = #bert.train<batch = 2, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %mask = bert.input "attention_mask" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %tk = bert.param "tk" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x4xf32>
    %kv = bert.embedding %ids, %tk : (tensor<?x?xi32>, tensor<16x4xf32>) -> tensor<?x?x4xf32>
    %a, %lse = bert.attention %e, %kv, %kv, %mask {heads = 2 : i64, kv_heads = 1 : i64, causal, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
    %cls = bert.select_token %a {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

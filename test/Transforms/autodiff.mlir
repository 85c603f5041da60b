// RUN: bertc-opt %s -split-input-file -bertc-autodiff | FileCheck %s

// A linear classifier: the loss is seeded with 1, the cross-entropy gradient feeds
// the weight and bias gradients, and both are accumulated into their slots.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[X:.*]] = bert.input "input_ids"
// CHECK: %[[W:.*]] = bert.param "w"
// CHECK: %[[B:.*]] = bert.param "b"
// CHECK: %[[LOGITS:.*]] = bert.linear
// CHECK: %[[LOSS:.*]] = bert.cross_entropy %[[LOGITS]]
// CHECK: %[[ONE:.*]] = bert.fill 1.000000e+00
// CHECK: %[[DLOGITS:.*]] = bert.cross_entropy_grad %[[ONE]], %[[LOGITS]]
// The input is not trainable: no linear_grad_input is built.
// CHECK-NOT: bert.linear_grad_input
// CHECK: %[[DW:.*]] = bert.linear_grad_weight %[[DLOGITS]], %[[E:.*]] :
// CHECK: %[[DB:.*]] = bert.bias_grad %[[DLOGITS]]
// CHECK: bert.accumulate_grad %[[W]], %[[DW]]
// CHECK: bert.accumulate_grad %[[B]], %[[DB]]
// CHECK: return %[[LOSS]]
module {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %cls = bert.select_token %e {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A residual connection: the gradient reaching %h through both uses is summed, and
// the frozen table costs no embedding_grad.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[H:.*]] = bert.gelu
// CHECK: %[[R:.*]] = bert.add %[[H]], %[[H]]
// CHECK: %[[DR:.*]] = bert.tanh_grad
// CHECK: %[[DH:.*]] = bert.add %[[DR]], %[[DR]]
// CHECK: bert.gelu_grad %[[DH]]
// CHECK-NOT: bert.embedding_grad
// CHECK: bert.accumulate_grad
module {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %cls = bert.select_token %e {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x8xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %p = bert.linear %cls, %w, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %h = bert.gelu %p : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %r = bert.add %h, %h : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %y = bert.tanh %r : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %w2 = bert.param "w2" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b2 = bert.param "b2" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %y, %w2, %b2 : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

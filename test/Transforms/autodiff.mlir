// RUN: bertc-opt %s -split-input-file -bertc-autodiff | FileCheck %s

// A linear classifier: the loss is seeded with 1, the cross-entropy gradient feeds
// the weight and bias gradients, and both are accumulated into their slots.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[X:.*]] = bert.input "input_ids"
// CHECK: %[[W:.*]] = bert.param "w"
// CHECK: %[[B:.*]] = bert.param "b"
// CHECK: %[[LOGITS:.*]] = bert.linear %[[CLS:.*]], %[[W]], %[[B]]
// CHECK: %[[LOSS:.*]] = bert.cross_entropy %[[LOGITS]], %[[LABELS:[^ ]*]] :
// CHECK: %[[ONE:.*]] = bert.fill 1.000000e+00
// CHECK: %[[DLOGITS:.*]] = bert.cross_entropy_grad %[[ONE]], %[[LOGITS]], %[[LABELS]] :
// The input is not trainable: no linear_grad_input is built.
// CHECK-NOT: bert.linear_grad_input
// CHECK: %[[DW:.*]] = bert.linear_grad_weight %[[DLOGITS]], %[[CLS]] :
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
// the frozen table costs no embedding_grad. tanh's gradient reads its output (1 - y^2),
// GELU's its input.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[CLS:.*]] = bert.select_token
// CHECK: %[[P:.*]] = bert.linear %[[CLS]]
// CHECK: %[[H:.*]] = bert.gelu %[[P]]
// CHECK: %[[R:.*]] = bert.add %[[H]], %[[H]]
// CHECK: %[[Y:.*]] = bert.tanh %[[R]]
// CHECK: %[[W3:.*]] = bert.param "w2"
// CHECK: %[[DLOGITS:.*]] = bert.cross_entropy_grad
// CHECK: %[[DY:.*]] = bert.linear_grad_input %[[DLOGITS]], %[[W3]] :
// CHECK: bert.linear_grad_weight %[[DLOGITS]], %[[Y]] :
// CHECK: %[[DR:.*]] = bert.tanh_grad %[[DY]], %[[Y]] :
// CHECK: %[[DH:.*]] = bert.add %[[DR]], %[[DR]]
// CHECK: %[[DP:.*]] = bert.gelu_grad %[[DH]], %[[P]] :
// CHECK: bert.linear_grad_weight %[[DP]], %[[CLS]] :
// CHECK: bert.bias_grad %[[DP]] :
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

// -----

// Two GELUs, the first its tanh approximation: each gradient computes the derivative of its
// own GELU (the exact one's prints no approximation).
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[P:.*]] = bert.linear
// CHECK: %[[H:.*]] = bert.gelu %[[P]] {approximate = #bert.gelu_approximation<tanh>} :
// CHECK: %[[E:.*]] = bert.gelu %[[H]] :
// CHECK: %[[DH:.*]] = bert.gelu_grad %{{.*}}, %[[H]] : (
// CHECK: bert.gelu_grad %[[DH]], %[[P]] {approximate = #bert.gelu_approximation<tanh>} :
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
    %h = bert.gelu %p {approximate = #bert.gelu_approximation<tanh>} : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %g = bert.gelu %h : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %w2 = bert.param "w2" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b2 = bert.param "b2" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %g, %w2, %b2 : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// What each gradient op reads: ReLU's its output (y > 0), dropout only its result's
// gradient (the mask is regenerated from the stream), LayerNorm its input and gamma (the
// statistics are recomputed), a linear layer's input gradient the weight and its weight
// gradient the input, the embedding's the ids.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[IDS:.*]] = bert.input "input_ids"
// CHECK: %[[T:.*]] = bert.param "t"
// CHECK: %[[E:.*]] = bert.embedding %[[IDS]], %[[T]]
// CHECK: %[[G:.*]] = bert.param "gamma"
// CHECK: %[[N:.*]] = bert.layernorm %[[E]], %[[G]]
// CHECK: %[[W:.*]] = bert.param "w"
// CHECK: %[[P:.*]] = bert.linear %[[N]], %[[W]]
// CHECK: %[[R:.*]] = bert.relu %[[P]]
// CHECK: %[[D:.*]] = bert.dropout %[[R]]
// CHECK: %[[CLS:.*]] = bert.select_token %[[D]]
// CHECK: %[[DCLS:.*]] = bert.linear_grad_input
// CHECK: %[[DD:.*]] = bert.select_token_grad %[[DCLS]]
// CHECK: %[[DR:.*]] = bert.dropout_grad %[[DD]] {rate = 1.000000e-01 : f32, stream = 3 : i32} :
// CHECK: %[[DP:.*]] = bert.relu_grad %[[DR]], %[[R]] :
// CHECK: %[[DN:.*]] = bert.linear_grad_input %[[DP]], %[[W]] :
// CHECK: bert.linear_grad_weight %[[DP]], %[[N]] :
// CHECK: %[[DE:[^,]*]], %{{[^,]*}}, %{{[^ ]*}} = bert.layernorm_grad %[[DN]], %[[E]], %[[G]] {epsilon
// CHECK: bert.embedding_grad %[[DE]], %[[IDS]]
module {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %gamma = bert.param "gamma" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<8xf32>
    %beta = bert.param "beta" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %n = bert.layernorm %e, %gamma, %beta {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %w = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal"} : tensor<8x8xf32>
    %b = bert.param "b" {group = "encoder.layer.0", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %p = bert.linear %n, %w, %b : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %r = bert.relu %p : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %d = bert.dropout %r {rate = 0.1 : f32, stream = 3 : i32} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %cls = bert.select_token %d {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w2 = bert.param "w2" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b2 = bert.param "b2" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w2, %b2 : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

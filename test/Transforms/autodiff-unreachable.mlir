// RUN: bertc-opt %s -bertc-autodiff -verify-diagnostics | FileCheck %s

// A layer whose output no later op reads (a custom head over an earlier layer) has no
// path to the loss: its trainable parameters get no gradient, so they become frozen (no
// gradient slot, no AdamW state, no decay), as PyTorch's AdamW skips a parameter whose
// grad stays None; one warning per group.
// CHECK-LABEL: func.func @micro_step
// CHECK: bert.param "w" {{{.*}}trainable = true}
// CHECK: bert.param "unused.weight" {{{.*}}trainable = false}
// CHECK: bert.param "unused.bias" {{{.*}}trainable = false}
// CHECK: bert.accumulate_grad
// CHECK-NOT: bert.accumulate_grad
// CHECK: return
module {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %cls = bert.select_token %e {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "w" {group = "head", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    // expected-warning@+1 {{parameter 'unused.weight' (group 'encoder.layer.2') has no path to the loss: it gets no gradient and no optimizer state and keeps its starting value, as in PyTorch}}
    %u = bert.param "unused.weight" {group = "encoder.layer.2", trainable = true, decay = true, init = "normal"} : tensor<8x8xf32>
    %ub = bert.param "unused.bias" {group = "encoder.layer.2", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %dead = bert.linear %e, %u, %ub : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %zero = bert.param "zero" {group = "head", trainable = false, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w, %zero : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

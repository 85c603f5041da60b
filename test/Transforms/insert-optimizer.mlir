// RUN: bertc-opt %s -bertc-insert-optimizer | FileCheck %s

// One AdamW update per trainable parameter, in program order, with the module's
// settings; no decay for parameters marked decay = false, nothing for frozen ones.
// CHECK-LABEL: func.func @optimizer_step()
// CHECK-NEXT: %[[W:.*]] = bert.param "w"
// CHECK-NEXT: bert.adamw %[[W]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
// CHECK-NEXT: %[[B:.*]] = bert.param "b"
// CHECK-NEXT: bert.adamw %[[B]] {{{.*}}weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT: return
module attributes {bert.train = #bert.train<batch = 1, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %labels = bert.input "labels" : tensor<?xi32>
    %x = bert.param "frozen" {group = "pooler", trainable = false, decay = true, init = "normal"} : tensor<4x2xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x2xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %x, %w, %b : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<4x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

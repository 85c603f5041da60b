// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-plan-buffers="alignment=64" | FileCheck %s
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64" | FileCheck %s --check-prefix=AUTODIFF-ORDER

// A two-layer head at batch 1, seq 1: the weight gradients (d w1 = 256x64 f32 = 65536 B,
// d w2 = 2x256 = 2048 B) dwarf the activations. The fixed regions end at 278912.
//
// In autodiff's order every accumulate_grad comes last, so at bias_grad(d g) all
// gradients are live: d w1 65536 + d b1 1024 + d w2 2048 + d b2 8 + d g 1024 + loss 4
// = 69644, and 278912 + 69644 = 348556.
// AUTODIFF-ORDER: lower_bound_bytes = 348556
//
// Scheduled, each gradient is accumulated as soon as it exists; the peak is at d w1:
// d w1 65536 + d g 1024 + cls 256 + loss 4 = 66820, and 278912 + 66820 = 345732.
// A weight gradient read only by its accumulation is priced as no allocation
// (-bertc-accumulate-in-gemm writes it into its slot), so each weight-gradient GEMM runs
// as soon as its result gradient exists, and the activation it reads (g, cls) dies there
// rather than after the rest of the backward.
// CHECK: lower_bound_bytes = 345732
// CHECK-LABEL: func.func @micro_step
// CHECK: bert.cross_entropy_grad
// CHECK-NEXT: %[[DW2:.*]] = bert.linear_grad_weight
// CHECK-NEXT: bert.accumulate_grad %{{.*}}, %[[DW2]]
// CHECK-NEXT: %[[DB2:.*]] = bert.bias_grad
// CHECK-NEXT: bert.accumulate_grad %{{.*}}, %[[DB2]]
// CHECK-NEXT: bert.linear_grad_input
// CHECK-NEXT: bert.gelu_grad
// CHECK-NEXT: %[[DW1:.*]] = bert.linear_grad_weight
// CHECK-NEXT: bert.accumulate_grad %{{.*}}, %[[DW1]]
// CHECK-NEXT: %[[DB1:.*]] = bert.bias_grad
// CHECK-NEXT: bert.accumulate_grad %{{.*}}, %[[DB1]]
// CHECK-NEXT: return
module attributes {bert.max_batch = 1 : i64, bert.max_seq = 1 : i64, bert.train = #bert.train<batch = 1, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x64xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x64xf32>) -> tensor<?x?x64xf32>
    %cls = bert.select_token %e {index = 0 : i64} : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
    %w1 = bert.param "w1" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<256x64xf32>
    %b1 = bert.param "b1" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<256xf32>
    %h = bert.linear %cls, %w1, %b1 : (tensor<?x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<?x256xf32>
    %g = bert.gelu %h : (tensor<?x256xf32>) -> tensor<?x256xf32>
    %w2 = bert.param "w2" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x256xf32>
    %b2 = bert.param "b2" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %g, %w2, %b2 : (tensor<?x256xf32>, tensor<2x256xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-fuse-optimizer | FileCheck %s --implicit-check-not=accumulate_grad
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-fuse-optimizer -bertc-plan-buffers -bertc-verify-budget | FileCheck %s --check-prefix=PLAN --implicit-check-not="grad ="

// With one micro-step per optimizer step (batch 4 = max_batch), each update moves into the
// backward: it takes its gradient as an operand, in place of the accumulation, right after
// the gradient and the parameter's last reader, and @optimizer_step is left empty.
// CHECK-LABEL: func.func @micro_step
// CHECK-DAG: %[[T:.*]] = bert.param "t"
// CHECK-DAG: %[[W:.*]] = bert.param "w"
// CHECK-DAG: %[[V:.*]] = bert.param "v"
// CHECK-DAG: %[[C:.*]] = bert.param "c"
// Each weight gradient's GEMM runs as soon as its result gradient exists (it frees the
// activation it reads); the update waits for the weight's last reader, the input gradient.
// CHECK: %[[DV:.*]] = bert.linear_grad_weight %{{.*}} -> tensor<8x16xf32>
// The classifier's bias: its gradient is its only reader in the backward.
// CHECK-NEXT: %[[DC:.*]] = bert.bias_grad %{{.*}} : (tensor<?x8xf32>) -> tensor<8xf32>
// CHECK-NEXT: bert.adamw %[[C]], %[[DC]] {{{.*}}weight_decay = 0.000000e+00 : f64} : tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT: bert.linear_grad_input %{{.*}}, %[[V]]
// CHECK-NEXT: bert.adamw %[[V]], %[[DV]] {{{.*}}weight_decay = 1.000000e-02 : f64} : tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NEXT: %[[DW:.*]] = bert.linear_grad_weight %{{.*}} -> tensor<16x16xf32>
// CHECK: bert.linear_grad_input %{{.*}}, %[[W]]
// CHECK-NEXT: bert.adamw %[[W]], %[[DW]]
// CHECK: %[[DT:.*]] = bert.embedding_grad
// CHECK-NEXT: bert.adamw %[[T]], %[[DT]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @optimizer_step
// CHECK-NEXT: return

// Planned: no gradient region and no gradient slots (the gradients are activations that die
// at their updates); the moments stay, 2 x 4 x (1024 + 256 + 16 + 128 + 8) = 11456 bytes
// of values, 12064 with the 256-byte alignment of each slot.
// PLAN: gradients = [{{[0-9]+}}, 0], optimizer_state = [{{[0-9]+}}, 12064]
// PLAN: bert.param "w" {bert.slots = #bert.param_slots<value = {{[0-9]+}}, adam_m = {{[0-9]+}}, adam_v = {{[0-9]+}}>
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %cls = bert.select_token %e {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<16x16xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %h = bert.linear %cls, %w, %b : (tensor<?x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %v = bert.param "v" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %c = bert.param "c" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %h, %v, %c : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

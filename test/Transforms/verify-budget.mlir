// RUN: bertc-opt %s -bertc-verify-budget="budget=3264" | FileCheck %s
// RUN: bertc-opt %s -bertc-verify-budget | FileCheck %s
// RUN: not bertc-opt %s -bertc-verify-budget="budget=3263" 2>&1 | FileCheck %s --check-prefix=OVER

// One byte short of the arena is over budget.
// OVER: error: the plan needs 3264 bytes, over the budget of 3263 bytes

// The plan of plan-buffers.mlir (alignment 64), checked against a budget of exactly its
// 3264 bytes, then with no budget; a plan that verifies comes back unchanged.
// Regions: parameters [0, 584), gradients [640, 712), optimizer_state [768, 968),
// scratch [1024, 1024) (empty, so it may share an offset with inputs), inputs
// [1024, 1168), activations [1216, 3264) = arena_bytes.
// CHECK: bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584],
// CHECK-SAME: gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0],
// CHECK-SAME: inputs = [1024, 144], activations = [1216, 2048],
// CHECK-SAME: loss = 1472>
// CHECK-LABEL: func.func @micro_step
// CHECK: bert.input "input_ids" {bert.offsets = array<i64: 1024>}
// CHECK: bert.input "labels" {bert.offsets = array<i64: 1152>}
// CHECK: bert.param "t" {bert.slots = #bert.param_slots<value = 0>,
// Steps 3 and 4: e [1216, 2240) is live at its user gelu, so gelu takes [2240, 3264).
// CHECK: bert.embedding {{.*}}bert.offsets = array<i64: 1216>
// CHECK: bert.gelu {{.*}}bert.offsets = array<i64: 2240>
// Step 5: e died at step 4, so the CLS rows [1216, 1344) may reuse its bytes.
// CHECK: bert.select_token {{.*}}bert.offsets = array<i64: 1216>
// CHECK: bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 640, adam_m = 768, adam_v = 896>
// CHECK: bert.linear {{.*}}bert.offsets = array<i64: 1344>
// The loss [1472, 1476) lives to the end: nothing later takes its bytes.
// CHECK: bert.cross_entropy {{.*}}bert.offsets = array<i64: 1472>
// CHECK: bert.fill {{.*}}bert.offsets = array<i64: 1536>
// CHECK: bert.cross_entropy_grad {{.*}}bert.offsets = array<i64: 1408>
// d w [1344, 1408) ends where d logits [1408, 1440) begins: touching is not overlapping.
// CHECK: bert.linear_grad_weight {{.*}}bert.offsets = array<i64: 1344>
// CHECK: bert.bias_grad {{.*}}bert.offsets = array<i64: 1216>
// CHECK-LABEL: func.func @optimizer_step
// CHECK: bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 640, adam_m = 768, adam_v = 896>
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1024>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1152>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1216>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %4 = bert.gelu %3 {bert.offsets = array<i64: 2240>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %5 = bert.select_token %4 {bert.offsets = array<i64: 1216>, index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %6 = bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 640, adam_m = 768, adam_v = 896>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    %7 = bert.param "b" {bert.slots = #bert.param_slots<value = 576, grad = 704, adam_m = 832, adam_v = 960>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    %8 = bert.linear %5, %6, %7 {bert.offsets = array<i64: 1344>} : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %9 = bert.cross_entropy %8, %1 {bert.offsets = array<i64: 1472>} : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    %10 = bert.fill 1.000000e+00 {bert.offsets = array<i64: 1536>} : tensor<f32>
    %11 = bert.cross_entropy_grad %10, %8, %1 {bert.offsets = array<i64: 1408>} : (tensor<f32>, tensor<?x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
    %12 = bert.linear_grad_weight %11, %5 {bert.offsets = array<i64: 1344>} : (tensor<?x2xf32>, tensor<?x8xf32>) -> tensor<2x8xf32>
    %13 = bert.bias_grad %11 {bert.offsets = array<i64: 1216>} : (tensor<?x2xf32>) -> tensor<2xf32>
    bert.accumulate_grad %6, %12 : tensor<2x8xf32>, tensor<2x8xf32>
    bert.accumulate_grad %7, %13 : tensor<2xf32>, tensor<2xf32>
    return %9 : tensor<f32>
  }
  func.func @optimizer_step() {
    %0 = bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 640, adam_m = 768, adam_v = 896>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    bert.adamw %0 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.0099999997764825821 : f64} : tensor<2x8xf32>
    %1 = bert.param "b" {bert.slots = #bert.param_slots<value = 576, grad = 704, adam_m = 832, adam_v = 960>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    bert.adamw %1 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.000000e+00 : f64} : tensor<2xf32>
    return
  }
}


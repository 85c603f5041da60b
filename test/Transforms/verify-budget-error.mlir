// RUN: bertc-opt %s -split-input-file -verify-diagnostics -bertc-verify-budget="budget=3264"

// The plan of plan-buffers.mlir (alignment 64, 3264 bytes), each case with one edit.
// @optimizer_step and bert.train are dropped where the case does not need them.
// Steps of @micro_step: 0 input_ids, 1 labels, 2 t, 3 e, 4 gelu, 5 cls, 6 w, 7 b,
// 8 logits, 9 loss, 10 seed, 11 d logits, 12 d w, 13 d b, 14-15 accumulate, 16 return.

// gelu may take over e's bytes in place (e dies at gelu), but select_token is no
// in-place op and reads gelu(e) at step 5: it may not start inside gelu(e)'s bytes.
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1024>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1152>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1216>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    // expected-note@+1 {{the live slot is defined here}}
    %4 = bert.gelu %3 {bert.offsets = array<i64: 1216>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    // expected-error@+1 {{'bert.select_token' result 0 [1216, 1344) overlaps live 'bert.gelu' result 0 [1216, 2240)}}
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
}

// -----

// gelu is an in-place op, but e is read again at step 5 (select_token), so e does not
// die at gelu and gelu may not take over its bytes.
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1024>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1152>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    // expected-note@+1 {{the live slot is defined here}}
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1216>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    // expected-error@+1 {{'bert.gelu' result 0 [1216, 2240) overlaps live 'bert.embedding' result 0 [1216, 2240)}}
    %4 = bert.gelu %3 {bert.offsets = array<i64: 1216>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %5 = bert.select_token %3 {bert.offsets = array<i64: 2240>, index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %6 = bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 640, adam_m = 768, adam_v = 896>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    %7 = bert.param "b" {bert.slots = #bert.param_slots<value = 576, grad = 704, adam_m = 832, adam_v = 960>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    %8 = bert.linear %5, %6, %7 {bert.offsets = array<i64: 1344>} : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %9 = bert.cross_entropy %8, %1 {bert.offsets = array<i64: 1472>} : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %9 : tensor<f32>
  }
}

// -----

// d logits (step 11) is read by bias_grad at step 13, so d w (step 12) may not
// start inside it: [1408, 1472) against [1408, 1440).
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
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
    // expected-note@+1 {{the live slot is defined here}}
    %11 = bert.cross_entropy_grad %10, %8, %1 {bert.offsets = array<i64: 1408>} : (tensor<f32>, tensor<?x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
    // expected-error@+1 {{'bert.linear_grad_weight' result 0 [1408, 1472) overlaps live 'bert.cross_entropy_grad' result 0 [1408, 1440)}}
    %12 = bert.linear_grad_weight %11, %5 {bert.offsets = array<i64: 1408>} : (tensor<?x2xf32>, tensor<?x8xf32>) -> tensor<2x8xf32>
    %13 = bert.bias_grad %11 {bert.offsets = array<i64: 1216>} : (tensor<?x2xf32>) -> tensor<2xf32>
    bert.accumulate_grad %6, %12 : tensor<2x8xf32>, tensor<2x8xf32>
    bert.accumulate_grad %7, %13 : tensor<2xf32>, tensor<2xf32>
    return %9 : tensor<f32>
  }
}

// -----

// The returned loss has no user after step 9 but lives to the end: d b may not reuse it.
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
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
    // expected-note@+1 {{the live slot is defined here}}
    %9 = bert.cross_entropy %8, %1 {bert.offsets = array<i64: 1472>} : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    %10 = bert.fill 1.000000e+00 {bert.offsets = array<i64: 1536>} : tensor<f32>
    %11 = bert.cross_entropy_grad %10, %8, %1 {bert.offsets = array<i64: 1408>} : (tensor<f32>, tensor<?x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
    %12 = bert.linear_grad_weight %11, %5 {bert.offsets = array<i64: 1344>} : (tensor<?x2xf32>, tensor<?x8xf32>) -> tensor<2x8xf32>
    // expected-error@+1 {{'bert.bias_grad' result 0 [1472, 1480) overlaps live 'bert.cross_entropy' result 0 [1472, 1476)}}
    %13 = bert.bias_grad %11 {bert.offsets = array<i64: 1472>} : (tensor<?x2xf32>) -> tensor<2xf32>
    bert.accumulate_grad %6, %12 : tensor<2x8xf32>, tensor<2x8xf32>
    bert.accumulate_grad %7, %13 : tensor<2xf32>, tensor<2xf32>
    return %9 : tensor<f32>
  }
}

// -----

// Parameter slots are live for the whole step: b's value on top of w's.
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1024>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1152>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1216>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %4 = bert.gelu %3 {bert.offsets = array<i64: 2240>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %5 = bert.select_token %4 {bert.offsets = array<i64: 1216>, index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    // expected-note@+1 {{the live slot is defined here}}
    %6 = bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 640, adam_m = 768, adam_v = 896>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    // expected-error@+1 {{'bert.param' "b" value [512, 520) overlaps live 'bert.param' "w" value [512, 576)}}
    %7 = bert.param "b" {bert.slots = #bert.param_slots<value = 512, grad = 704, adam_m = 832, adam_v = 960>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
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
}

// -----

// gelu moved up by 64 bytes ends at 3328, past the 3264-byte arena.
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1024>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1152>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1216>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    // expected-error@+1 {{'bert.gelu' result 0 [2304, 3328) is not inside the arena of 3264 bytes}}
    %4 = bert.gelu %3 {bert.offsets = array<i64: 2304>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
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
}

// -----

// w's gradient inside the arena but in the optimizer state (on top of w's first moment).
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1024>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1152>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1216>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %4 = bert.gelu %3 {bert.offsets = array<i64: 2240>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %5 = bert.select_token %4 {bert.offsets = array<i64: 1216>, index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    // expected-error@+1 {{'bert.param' "w" grad [768, 832) is not inside the gradients region [640, 712)}}
    %6 = bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 768, adam_m = 768, adam_v = 896>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
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
}

// -----

// An activation in the labels' slot: outside the activations region.
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
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
    // expected-error@+1 {{'bert.fill' result 0 [1152, 1156) is not inside the activations region [1216, 3264)}}
    %10 = bert.fill 1.000000e+00 {bert.offsets = array<i64: 1152>} : tensor<f32>
    %11 = bert.cross_entropy_grad %10, %8, %1 {bert.offsets = array<i64: 1408>} : (tensor<f32>, tensor<?x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
    %12 = bert.linear_grad_weight %11, %5 {bert.offsets = array<i64: 1344>} : (tensor<?x2xf32>, tensor<?x8xf32>) -> tensor<2x8xf32>
    %13 = bert.bias_grad %11 {bert.offsets = array<i64: 1216>} : (tensor<?x2xf32>) -> tensor<2xf32>
    bert.accumulate_grad %6, %12 : tensor<2x8xf32>, tensor<2x8xf32>
    bert.accumulate_grad %7, %13 : tensor<2xf32>, tensor<2xf32>
    return %9 : tensor<f32>
  }
}

// -----

// A valid plan padded to 4096 bytes, over the 3264-byte budget of the RUN line.
// expected-error@+1 {{the plan needs 4096 bytes, over the budget of 3264 bytes}}
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 4096, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 4096, loss = 1472>} {
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
}

// -----

// The optimizer state starting at 704 overlaps the gradients' last 8 bytes.
// expected-error@+1 {{bert.plan regions 'gradients' [640, 712) and 'optimizer_state' [704, 968) overlap}}
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [704, 264], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
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
}

// -----

// gelu lost its bert.offsets.
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1024>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1152>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1216>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    // expected-error@+1 {{'bert.gelu' needs bert.offsets with one offset per result (1)}}
    %4 = bert.gelu %3 : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
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
}

// -----

// A trainable parameter without a gradient slot.
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1024>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1152>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1216>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %4 = bert.gelu %3 {bert.offsets = array<i64: 2240>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %5 = bert.select_token %4 {bert.offsets = array<i64: 1216>, index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    // expected-error@+1 {{'bert.param' "w" has no grad slot}}
    %6 = bert.param "w" {bert.slots = #bert.param_slots<value = 512, adam_m = 768, adam_v = 896>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
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
}

// -----

// No plan at all.
// expected-error@+1 {{module has no memory plan: run -bertc-plan-buffers}}
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64} {
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
}

// -----

// @optimizer_step would update w through b's gradient slot.
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
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
    // expected-error@+1 {{'bert.param' "w" grad slot differs from @micro_step's}}
    %0 = bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 704, adam_m = 768, adam_v = 896>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    bert.adamw %0 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.0099999997764825821 : f64} : tensor<2x8xf32>
    %1 = bert.param "b" {bert.slots = #bert.param_slots<value = 576, grad = 704, adam_m = 832, adam_v = 960>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    bert.adamw %1 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.000000e+00 : f64} : tensor<2xf32>
    return
  }
}

// -----

// The plan's loss offset is the seed's slot, not the returned value's.
// expected-error@+1 {{bert.plan 'loss' is not the offset of the value @micro_step returns}}
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1536>} {
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
}

// -----

// The optimizer state in the host-resident end, but no bert.optimizer_on_host: the
// device's AdamW would read bytes the device does not hold.
// expected-error@+1 {{the master weights and optimizer state are in host memory, but the optimizer runs on the device}}
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.plan = #bert.plan<arena_bytes = 3520, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [3264, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472, host_bytes = 256>, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1024>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1152>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1216>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %4 = bert.gelu %3 {bert.offsets = array<i64: 2240>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %5 = bert.select_token %4 {bert.offsets = array<i64: 1216>, index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %6 = bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 640, adam_m = 3264, adam_v = 3392>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    %7 = bert.param "b" {bert.slots = #bert.param_slots<value = 576, grad = 704, adam_m = 3328, adam_v = 3456>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
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
}

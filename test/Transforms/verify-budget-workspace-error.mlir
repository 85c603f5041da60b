// RUN: bertc-opt %s -split-input-file -verify-diagnostics -bertc-verify-budget
// The kernel workspace slots of a plan (plan-buffers-workspace.mlir's, planned for the
// CPU), each broken in one way.

// A LayerNorm's kernel workspace must lie in the scratch region [1536, 1600).
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4 : i64, bert.plan = #bert.plan<arena_bytes = 2816, parameters = [0, 712], master_weights = [768, 0], gradients = [768, 200], optimizer_state = [1024, 456], scratch = [1536, 64], inputs = [1600, 72], activations = [1728, 1028], gemm_workspace = [2816, 0], lower_bound_bytes = 2636, loss = 2752>, bert.train = #bert.train<batch = 2, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1600>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1664>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1728>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %4 = bert.param "gamma" {bert.slots = #bert.param_slots<value = 512, grad = 768, adam_m = 1024, adam_v = 1280>, decay = false, group = "embeddings", init = "ones", trainable = true} : tensor<8xf32>
    %5 = bert.param "beta" {bert.slots = #bert.param_slots<value = 576, grad = 832, adam_m = 1088, adam_v = 1344>, decay = false, group = "embeddings", init = "zeros", trainable = true} : tensor<8xf32>
    // expected-error@+1 {{'bert.layernorm' workspace [1728, 1792) is not inside the scratch region [1536, 1600)}}
    %6 = bert.layernorm %3, %4, %5 {bert.offsets = array<i64: 1984>, bert.workspace = 1728 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %7 = bert.select_token %6 {bert.offsets = array<i64: 2240>, index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %8 = bert.param "w" {bert.slots = #bert.param_slots<value = 640, grad = 896, adam_m = 1152, adam_v = 1408>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    %9 = bert.param "b" {bert.slots = #bert.param_slots<value = 704, grad = 960, adam_m = 1216, adam_v = 1472>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    %10 = bert.linear %7, %8, %9 {bert.offsets = array<i64: 1984>} : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %11 = bert.cross_entropy %10, %1 {bert.offsets = array<i64: 2752>} : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    %12 = bert.fill 1.000000e+00 {bert.offsets = array<i64: 2112>} : tensor<f32>
    %13 = bert.cross_entropy_grad %12, %10, %1 {bert.offsets = array<i64: 2048>} : (tensor<f32>, tensor<?x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
    %14 = bert.linear_grad_input %13, %8 {bert.offsets = array<i64: 2304>} : (tensor<?x2xf32>, tensor<2x8xf32>) -> tensor<?x8xf32>
    %15 = bert.linear_grad_weight %13, %7 {bert.offsets = array<i64: 2496>} : (tensor<?x2xf32>, tensor<?x8xf32>) -> tensor<2x8xf32>
    %16 = bert.bias_grad %13 {bert.offsets = array<i64: 2688>} : (tensor<?x2xf32>) -> tensor<2xf32>
    %17 = bert.select_token_grad %14 {bert.offsets = array<i64: 1984>, index = 0 : i64} : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
    %inputGrad, %gammaGrad, %betaGrad = bert.layernorm_grad %17, %3, %4 {bert.offsets = array<i64: 2240, 2560, 2624>, bert.workspace = 1536 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>)
    bert.accumulate_grad %4, %gammaGrad : tensor<8xf32>, tensor<8xf32>
    bert.accumulate_grad %5, %betaGrad : tensor<8xf32>, tensor<8xf32>
    bert.accumulate_grad %8, %15 : tensor<2x8xf32>, tensor<2x8xf32>
    bert.accumulate_grad %9, %16 : tensor<2xf32>, tensor<2xf32>
    return %11 : tensor<f32>
  }
  func.func @optimizer_step() {
    %0 = bert.param "gamma" {bert.slots = #bert.param_slots<value = 512, grad = 768, adam_m = 1024, adam_v = 1280>, decay = false, group = "embeddings", init = "ones", trainable = true} : tensor<8xf32>
    bert.adamw %0 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.000000e+00 : f64} : tensor<8xf32>
    %1 = bert.param "beta" {bert.slots = #bert.param_slots<value = 576, grad = 832, adam_m = 1088, adam_v = 1344>, decay = false, group = "embeddings", init = "zeros", trainable = true} : tensor<8xf32>
    bert.adamw %1 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.000000e+00 : f64} : tensor<8xf32>
    %2 = bert.param "w" {bert.slots = #bert.param_slots<value = 640, grad = 896, adam_m = 1152, adam_v = 1408>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    bert.adamw %2 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.0099999997764825821 : f64} : tensor<2x8xf32>
    %3 = bert.param "b" {bert.slots = #bert.param_slots<value = 704, grad = 960, adam_m = 1216, adam_v = 1472>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    bert.adamw %3 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.000000e+00 : f64} : tensor<2xf32>
    return
  }
}

// -----

// Every LayerNorm needs a kernel workspace (the CUDA kernels keep its statistics there).
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4 : i64, bert.plan = #bert.plan<arena_bytes = 2816, parameters = [0, 712], master_weights = [768, 0], gradients = [768, 200], optimizer_state = [1024, 456], scratch = [1536, 64], inputs = [1600, 72], activations = [1728, 1028], gemm_workspace = [2816, 0], lower_bound_bytes = 2636, loss = 2752>, bert.train = #bert.train<batch = 2, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" {bert.offsets = array<i64: 1600>} : tensor<?x?xi32>
    %1 = bert.input "labels" {bert.offsets = array<i64: 1664>} : tensor<?xi32>
    %2 = bert.param "t" {bert.slots = #bert.param_slots<value = 0>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    %3 = bert.embedding %0, %2 {bert.offsets = array<i64: 1728>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %4 = bert.param "gamma" {bert.slots = #bert.param_slots<value = 512, grad = 768, adam_m = 1024, adam_v = 1280>, decay = false, group = "embeddings", init = "ones", trainable = true} : tensor<8xf32>
    %5 = bert.param "beta" {bert.slots = #bert.param_slots<value = 576, grad = 832, adam_m = 1088, adam_v = 1344>, decay = false, group = "embeddings", init = "zeros", trainable = true} : tensor<8xf32>
    %6 = bert.layernorm %3, %4, %5 {bert.offsets = array<i64: 1984>, bert.workspace = 1536 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %7 = bert.select_token %6 {bert.offsets = array<i64: 2240>, index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %8 = bert.param "w" {bert.slots = #bert.param_slots<value = 640, grad = 896, adam_m = 1152, adam_v = 1408>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    %9 = bert.param "b" {bert.slots = #bert.param_slots<value = 704, grad = 960, adam_m = 1216, adam_v = 1472>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    %10 = bert.linear %7, %8, %9 {bert.offsets = array<i64: 1984>} : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %11 = bert.cross_entropy %10, %1 {bert.offsets = array<i64: 2752>} : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    %12 = bert.fill 1.000000e+00 {bert.offsets = array<i64: 2112>} : tensor<f32>
    %13 = bert.cross_entropy_grad %12, %10, %1 {bert.offsets = array<i64: 2048>} : (tensor<f32>, tensor<?x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
    %14 = bert.linear_grad_input %13, %8 {bert.offsets = array<i64: 2304>} : (tensor<?x2xf32>, tensor<2x8xf32>) -> tensor<?x8xf32>
    %15 = bert.linear_grad_weight %13, %7 {bert.offsets = array<i64: 2496>} : (tensor<?x2xf32>, tensor<?x8xf32>) -> tensor<2x8xf32>
    %16 = bert.bias_grad %13 {bert.offsets = array<i64: 2688>} : (tensor<?x2xf32>) -> tensor<2xf32>
    %17 = bert.select_token_grad %14 {bert.offsets = array<i64: 1984>, index = 0 : i64} : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
    // expected-error@+1 {{'bert.layernorm_grad' has no workspace slot (bert.workspace)}}
    %inputGrad, %gammaGrad, %betaGrad = bert.layernorm_grad %17, %3, %4 {bert.offsets = array<i64: 2240, 2560, 2624>, epsilon = 9.99999996E-13 : f32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>)
    bert.accumulate_grad %4, %gammaGrad : tensor<8xf32>, tensor<8xf32>
    bert.accumulate_grad %5, %betaGrad : tensor<8xf32>, tensor<8xf32>
    bert.accumulate_grad %8, %15 : tensor<2x8xf32>, tensor<2x8xf32>
    bert.accumulate_grad %9, %16 : tensor<2xf32>, tensor<2xf32>
    return %11 : tensor<f32>
  }
  func.func @optimizer_step() {
    %0 = bert.param "gamma" {bert.slots = #bert.param_slots<value = 512, grad = 768, adam_m = 1024, adam_v = 1280>, decay = false, group = "embeddings", init = "ones", trainable = true} : tensor<8xf32>
    bert.adamw %0 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.000000e+00 : f64} : tensor<8xf32>
    %1 = bert.param "beta" {bert.slots = #bert.param_slots<value = 576, grad = 832, adam_m = 1088, adam_v = 1344>, decay = false, group = "embeddings", init = "zeros", trainable = true} : tensor<8xf32>
    bert.adamw %1 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.000000e+00 : f64} : tensor<8xf32>
    %2 = bert.param "w" {bert.slots = #bert.param_slots<value = 640, grad = 896, adam_m = 1152, adam_v = 1408>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    bert.adamw %2 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.0099999997764825821 : f64} : tensor<2x8xf32>
    %3 = bert.param "b" {bert.slots = #bert.param_slots<value = 704, grad = 960, adam_m = 1216, adam_v = 1472>, decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    bert.adamw %3 {beta1 = 0.89999997615814208 : f64, beta2 = 0.99900001287460327 : f64, epsilon = 9.9999999392252903E-9 : f64, weight_decay = 0.000000e+00 : f64} : tensor<2xf32>
    return
  }
}

// RUN: bertc-opt %s | FileCheck %s
// RUN: bertc-opt %s | bertc-opt | FileCheck %s

// #bert.train prints every setting of train_settings.def in its order, whatever order it
// was written in; numbers print back exactly. Module attributes print sorted by name.
// CHECK: bert.plan = #bert.plan<arena_bytes = 4096, parameters = [0, 584],
// CHECK-SAME: master_weights = [640, 0], gradients = [640, 72], optimizer_state = [768, 200],
// CHECK-SAME: scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048],
// CHECK-SAME: gemm_workspace = [3264, 832], lower_bound_bytes = 3000, loss = 1472>
// CHECK-SAME: bert.train = #bert.train<batch = 8, epochs = 3, steps = 0, lr = 2.000000e-05,
// CHECK-SAME: weight_decay = 0.0123456789, beta1 = 9.000000e-01, beta2 = 0.99899999999999999,
// CHECK-SAME: adam_eps = 1.000000e-08, schedule = "linear", warmup = 1.000000e-01, seed = 42,
// CHECK-SAME: shuffle = true, num_labels = 2, initializer_range = 2.000000e-02, vocab = 30522,
// CHECK-SAME: type_vocab = 2, task = "span", max_grad_norm = 1.000000e+00>
module attributes {bert.train = #bert.train<task = "span", batch = 8, epochs = 3, steps = 0, lr = 2.0e-05, weight_decay = 0.0123456789, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "linear", warmup = 0.1, seed = 42, shuffle = true, num_labels = 2, initializer_range = 0.02, vocab = 30522, type_vocab = 2, max_grad_norm = 1.0>, bert.plan = #bert.plan<arena_bytes = 4096, parameters = [0, 584], master_weights = [640, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [3264, 832], lower_bound_bytes = 3000, loss = 1472>} {
  // A parameter's slots print in the order of #bert.param_slots, the absent ones left out.
  // CHECK-LABEL: func.func @param_slots
  // CHECK: bert.param "w" {bert.slots = #bert.param_slots<value = 0, master = 64, grad = 128, adam_m = 192, adam_v = 256>
  // CHECK: bert.param "t" {bert.slots = #bert.param_slots<value = 320>
  func.func @param_slots() {
    %0 = bert.param "w" {bert.slots = #bert.param_slots<adam_v = 256, value = 0, grad = 128, master = 64, adam_m = 192>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xbf16>
    %1 = bert.param "t" {bert.slots = #bert.param_slots<value = 320>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
    return
  }
}

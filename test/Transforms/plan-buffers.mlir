// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64" | FileCheck %s

// Bounds: batch 4, seq 8. Fixed regions first, each slot aligned to 64:
//   t [16,8] f32 = 512 B @0; w [2,8] = 64 B @512; b [2] = 8 B @576      parameters [0, 584)
//   all fp32: no master weights, an empty region @640                    master_weights [640, 640)
//   grads: w @640 (584 rounded up to 64), b @704                         gradients  [640, 712)
//   moments m: w @768, b @832; v: w @896, b @960                         optimizer  [768, 968)
//   no attention: empty scratch @1024; inputs: ids [4,8] i32 = 128 B @1024, labels @1152
//   activations begin at 1216 (1168 rounded up to 64).
// CHECK: bert.plan = #bert.plan<arena_bytes = 2368, parameters = [0, 584],
// CHECK-SAME: master_weights = [640, 0], gradients = [640, 72], optimizer_state = [768, 200],
// CHECK-SAME: scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 1152],
// CHECK-SAME: gemm_workspace = [2368, 0], lower_bound_bytes = 2368, loss = 1408>
// CHECK-LABEL: func.func @micro_step
// CHECK: bert.input "input_ids" {bert.offsets = array<i64: 1024>}
// CHECK: bert.input "labels" {bert.offsets = array<i64: 1152>}
// The frozen table has a value slot only.
// CHECK: bert.param "t" {bert.slots = #bert.param_slots<value = 0>,
// e = [4,8,8] f32 = 1024 B. The table is frozen, so no backward reads e: it dies at the
// gelu, which runs in place and takes over its bytes.
// CHECK: bert.embedding {{.*}}bert.offsets = array<i64: 1216>
// CHECK: bert.gelu {{.*}}bert.offsets = array<i64: 1216>
// select_token is not in place: the [4,8] CLS rows (128 B) go after gelu(e): 1216 + 1024.
// CHECK: bert.select_token {{.*}}bert.offsets = array<i64: 2240>
// CHECK: bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 640, adam_m = 768, adam_v = 896>
// CHECK: bert.param "b" {bert.slots = #bert.param_slots<value = 576, grad = 704, adam_m = 832, adam_v = 960>
// gelu(e) is dead once the CLS rows are taken: logits [4,2] = 32 B reuse 1216.
// CHECK: bert.linear {{.*}}bert.offsets = array<i64: 1216>
// Packing is largest first, at the lowest 64-aligned offset (relative to 1216) free for
// the buffer's steps (0 ids .. 8 logits, 9 loss, 10 seed, 11 d logits, 12 d w, 13 d b,
// 14-15 accumulate, 16 return):
//   d w    64 B [12,14]: meets the CLS rows only                      -> +0   = 1216
//   d logits 32 B [11,13]: meets logits +0 and d w +0                 -> +64  = 1280
//   d b     8 B [13,15]: meets d w +0 and d logits +64                -> +128 = 1344
//   loss    4 B [9,16]: meets logits +0, d logits +64, d b +128       -> +192 = 1408
//   seed    4 B [10,11]: meets logits +0, d logits +64, loss +192     -> +128 = 1344
// CHECK: bert.cross_entropy {{.*}}bert.offsets = array<i64: 1408>
// CHECK: bert.fill {{.*}}bert.offsets = array<i64: 1344>
// CHECK: bert.cross_entropy_grad {{.*}}bert.offsets = array<i64: 1280>
// CHECK: bert.linear_grad_weight {{.*}}bert.offsets = array<i64: 1216>
// CHECK: bert.bias_grad {{.*}}bert.offsets = array<i64: 1344>
// CHECK-LABEL: func.func @optimizer_step
// CHECK: bert.param "w" {bert.slots = #bert.param_slots<value = 512, grad = 640, adam_m = 768, adam_v = 896>
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %g = bert.gelu %e : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %cls = bert.select_token %g {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

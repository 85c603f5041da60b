// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer="optimizer-state=8bit" -bertc-plan-buffers="alignment=64" -bertc-verify-budget | FileCheck %s

// With optimizer-state=8bit, the 64x64 weight (4096 values, bitsandbytes' minimum) keeps
// 8-bit moments in blocks of 2048; the 64-value bias keeps fp32 ones. Slots aligned to 64:
//   t [16,64] f32 = 4096 B @0; w [64,64] = 16384 B @4096; b [64] = 256 B @20480
//   grads, those of parameters with 8-bit state last (so that the fp32 moments line up
//   with theirs): b @20736, w @20992                              gradients [20736, 37376)
//   fp32 moments first: b m @37376, v @37632 (256 B each)
//   then w's 8-bit state @37888: 2*4096 codes + 2*4*ceil(4096/2048) absmaxes = 8208 B
//     m codes @37888, v codes @41984 (+4096), m absmax @46080 (+8192), v absmax @46088 (+8)
//   optimizer_state [37376, 46096): 8720 B = 2*256 + 8208 (fp32 moments: 2*16384 + 2*256)
// CHECK: optimizer_state = [37376, 8720]
// CHECK-LABEL: func.func @micro_step
// CHECK: bert.param "w" {bert.slots = #bert.param_slots<{{.*}}value = 4096{{.*}}grad = 20992{{.*}}adam_m = 37888{{.*}}adam_v = 41984{{.*}}adam_m_absmax = 46080{{.*}}adam_v_absmax = 46088{{.*}}>
// CHECK: bert.param "b" {bert.slots = #bert.param_slots<{{.*}}value = 20480{{.*}}grad = 20736{{.*}}adam_m = 37376{{.*}}adam_v = 37632{{.*}}>
// CHECK-LABEL: func.func @optimizer_step
// CHECK: bert.param "w" {bert.slots = #bert.param_slots<{{.*}}adam_m = 37888{{.*}}adam_v = 41984{{.*}}adam_m_absmax = 46080{{.*}}adam_v_absmax = 46088{{.*}}>
// CHECK: bert.adamw {{.*}}state_block = 2048 : i64{{.*}} : tensor<64x64xf32>
// CHECK: bert.param "b"
// CHECK-NOT: state_block
// CHECK: bert.adamw {{.*}} : tensor<64xf32>
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 64, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x64xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x64xf32>) -> tensor<?x?x64xf32>
    %cls = bert.select_token %e {index = 0 : i64} : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<64x64xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<64xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x64xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

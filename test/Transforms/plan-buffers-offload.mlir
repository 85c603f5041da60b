// RUN: bertc-opt %s -split-input-file -verify-diagnostics -bertc-autodiff -bertc-insert-optimizer -bertc-mixed-precision="precision=bf16" -bertc-plan-buffers="alignment=64 offload-optimizer=true host-frozen-masters=true" -bertc-verify-budget | FileCheck %s

// With offload-optimizer the fp32 masters and the AdamW moments, which only the host's
// AdamW reads, move behind the device arena, followed (host-frozen-masters) by the frozen
// t's master, which no step reads. Slots aligned to 64:
//   parameters (bf16): t [16,64] 2048 B @0, w [64,64] 8192 B @2048, b [64] 128 B @10240
//   gradients (fp32): w 16384 B @10368, b 256 B @26752             [10368, 27008)
//   inputs @27008, activations [27200, 44612), no GEMM workspace: device arena 44672
//   host: masters w 16384 B @44672, b 256 B @61056                 [44672, 61312)
//         moments: m w @61312, b @77696; v w @77952, b @94336      [61312, 94592)
//         frozen masters: t 4096 B @94592                          [94592, 98688)
//   host_bytes = 98688 - 44672 = 54016
// CHECK: bert.optimizer_on_host
// CHECK-SAME: arena_bytes = 98688, parameters = [0, 10368], master_weights = [44672, 16640], gradients = [10368, 16640], optimizer_state = [61312, 33280]
// CHECK-SAME: gemm_workspace = [44672, 0], lower_bound_bytes = 44612, loss = 44608, host_bytes = 54016, frozen_masters = [94592, 4096]>
// CHECK-LABEL: func.func @micro_step
// CHECK: bert.param "t" {bert.slots = #bert.param_slots<{{.*}}value = 0{{.*}}master = 94592{{.*}}>
// CHECK: bert.param "w" {bert.slots = #bert.param_slots<{{.*}}value = 2048{{.*}}master = 44672{{.*}}grad = 10368{{.*}}adam_m = 61312{{.*}}adam_v = 77952{{.*}}>
// CHECK: bert.param "b" {bert.slots = #bert.param_slots<{{.*}}value = 10240{{.*}}master = 61056{{.*}}grad = 26752{{.*}}adam_m = 77696{{.*}}adam_v = 94336{{.*}}>
// The optimizer step reads the same host slots.
// CHECK-LABEL: func.func @optimizer_step
// CHECK: bert.param "w" {bert.slots = #bert.param_slots<{{.*}}master = 44672{{.*}}grad = 10368{{.*}}adam_m = 61312{{.*}}adam_v = 77952{{.*}}>
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

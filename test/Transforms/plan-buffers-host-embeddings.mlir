// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-mixed-precision="precision=bf16" -bertc-plan-buffers="alignment=64 offload-optimizer=true host-frozen-masters=true host-embeddings=true" -bertc-verify-budget | FileCheck %s
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64 host-embeddings=true" -bertc-verify-budget | FileCheck %s --check-prefix=FP32

// The frozen table t, which only a gather reads, lies in host memory with host-embeddings
// (plan-buffers-offload.mlir's plan without it): the device arena loses its 2048 B, the
// host end gains them after the optimizer's state, before the frozen masters.
//   parameters (bf16): w [64,64] 8192 B @0, b [64] 128 B @8192           [0, 8320)
//   gradients (fp32): w 16384 B @8320, b 256 B @24704                    [8320, 24960)
//   inputs @24960, activations [25152, 42564): device arena 42624 (44672 - 2048)
//   host: masters w 16384 B @42624, b 256 B @59008                       [42624, 59264)
//         moments: m w @59264, b @75648; v w @75904, b @92288            [59264, 92544)
//         host parameters: t [16,64] bf16 2048 B @92544                  [92544, 94592)
//         frozen masters: t 4096 B @94592                                [94592, 98688)
//   host_bytes = 98688 - 42624 = 56064
// CHECK: arena_bytes = 98688, parameters = [0, 8320], master_weights = [42624, 16640], gradients = [8320, 16640], optimizer_state = [59264, 33280]
// CHECK-SAME: lower_bound_bytes = 42564, loss = 42560, host_bytes = 56064, frozen_masters = [94592, 4096], host_parameters = [92544, 2048]>
// CHECK-LABEL: func.func @micro_step
// CHECK: bert.param "t" {bert.slots = #bert.param_slots<{{.*}}value = 92544{{.*}}master = 94592{{.*}}>
// CHECK: bert.param "w" {bert.slots = #bert.param_slots<{{.*}}value = 0{{.*}}master = 42624{{.*}}grad = 8320{{.*}}>
//
// In fp32 without other offloading, t (4096 B) is the host end's only region:
//   parameters: w 16384 B @0, b 256 B @16384; gradients w @16640, b @33024 [16640, 33280);
//   moments m w @33280, b @49664, v w @49920, b @66304 [33280, 66560); inputs @66560.
// FP32: host_bytes = 4096, host_parameters = [{{[0-9]+}}, 4096]>
// FP32: bert.param "t" {bert.slots = #bert.param_slots<value = [[T:[0-9]+]]>
// FP32: bert.param "w" {bert.slots = #bert.param_slots<value = 0, grad = 16640, adam_m = 33280, adam_v = 49920>
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

// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-plan-buffers | FileCheck %s --check-prefix=DEVICE
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-rematerialize="arena-budget=100000000 offload-checkpoints=true" -bertc-schedule-for-memory -bertc-plan-buffers | FileCheck %s --check-prefix=HOST
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-rematerialize="arena-budget=100000000 offload-checkpoints=true" -bertc-schedule-for-memory -bertc-plan-buffers -bertc-verify-budget -o /dev/null

// Two feed-forward layers with residuals (rematerialize.mlir's, twice) at batch 16 x seq 8
// = 128 rows, then LayerNorm and a classifier. The recomputation chain has three blocks:
// [embedding, layer 0], [layer 1] and [LayerNorm, head, loss]. With offload-checkpoints,
// what the first two keep for their backward waits in host memory, priced against
// recomputing it; the last block's backward follows its forward at once.
//
// On the CPU's prices (rematerialize.mlir's roofline) copying a tensor down and back
// reads and writes it twice: x (32768 B) 13.1 us + 2 launches against 7.60 us to recompute;
// h and g (131072 B) 52.4 us + 2 launches against 43.27 and 44.69 us. So every tensor of
// the two layers is recomputed, and only r0 = layer 0's output, [128, 64] fp32 = 32768 B,
// the second block's input, which no recomputation remakes, waits in host memory: one
// 32768-byte slot right after the device arena.
// DEVICE: bert.plan = #bert.plan<arena_bytes = 1758720,
// DEVICE-NOT: host_activations
// DEVICE-NOT: bert.offload
// HOST: bert.plan = #bert.plan<
// HOST-SAME: host_bytes = 32768, host_activations = [[[$HOST:[0-9]+]], 32768]>
// HOST-SAME: bert.recompute = [{{.*}}name = "embeddings"{{.*}}name = "layer0.dense"{{.*}}name = "layer0.gelu"{{.*}}name = "layer1.dense"{{.*}}name = "layer1.gelu"{{.*}}]
// The copy down follows r0's definer at once (layer 0's add, which still takes its operand's
// bytes in place); layer 1 and the residual read r0 on the device.
// HOST-LABEL: func.func @micro_step
// HOST: %[[R0:.*]] = bert.add
// HOST-NEXT: %[[H0:.*]] = bert.offload %[[R0]] {bert.offsets = array<i64: [[$HOST]]>}
// HOST-NEXT: bert.linear %[[R0]]
// HOST: bert.add %{{.*}}, %[[R0]]
// The copy back up comes just before the backward's first reader of r0, the recomputed
// dense of layer 1; layer 1's first weight gradient reads r0 after it.
// HOST: %[[BACK:.*]] = bert.reload %[[H0]]
// HOST-NEXT: bert.linear %[[BACK]], {{.*}}bert.recomputed
// HOST: bert.linear_grad_weight %{{.*}}, %[[BACK]]
// HOST-NOT: bert.reload

module attributes {bert.max_batch = 16 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 16, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x64xf32>
    %x = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x64xf32>) -> tensor<?x?x64xf32> loc(fused["embeddings"("model.toml":2:1)])
    %w1_0 = bert.param "l0.w1" {group = "layer0", trainable = true, decay = true, init = "normal"} : tensor<256x64xf32>
    %b1_0 = bert.param "l0.b1" {group = "layer0", trainable = true, decay = false, init = "zeros"} : tensor<256xf32>
    %h0 = bert.linear %x, %w1_0, %b1_0 : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<?x?x256xf32> loc(fused["layer0.dense"("model.toml":3:1)])
    %g0 = bert.gelu %h0 : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32> loc(fused["layer0.gelu"("model.toml":4:1)])
    %w2_0 = bert.param "l0.w2" {group = "layer0", trainable = true, decay = true, init = "normal"} : tensor<64x256xf32>
    %b2_0 = bert.param "l0.b2" {group = "layer0", trainable = true, decay = false, init = "zeros"} : tensor<64xf32>
    %o0 = bert.linear %g0, %w2_0, %b2_0 : (tensor<?x?x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %r0 = bert.add %o0, %x : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    %w1_1 = bert.param "l1.w1" {group = "layer1", trainable = true, decay = true, init = "normal"} : tensor<256x64xf32>
    %b1_1 = bert.param "l1.b1" {group = "layer1", trainable = true, decay = false, init = "zeros"} : tensor<256xf32>
    %h1 = bert.linear %r0, %w1_1, %b1_1 : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<?x?x256xf32> loc(fused["layer1.dense"("model.toml":3:1)])
    %g1 = bert.gelu %h1 : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32> loc(fused["layer1.gelu"("model.toml":4:1)])
    %w2_1 = bert.param "l1.w2" {group = "layer1", trainable = true, decay = true, init = "normal"} : tensor<64x256xf32>
    %b2_1 = bert.param "l1.b2" {group = "layer1", trainable = true, decay = false, init = "zeros"} : tensor<64xf32>
    %o1 = bert.linear %g1, %w2_1, %b2_1 : (tensor<?x?x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %r = bert.add %o1, %r0 : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    %gamma = bert.param "gamma" {group = "ffn", trainable = true, decay = false, init = "ones"} : tensor<64xf32>
    %beta = bert.param "beta" {group = "ffn", trainable = true, decay = false, init = "zeros"} : tensor<64xf32>
    %n = bert.layernorm %r, %gamma, %beta {epsilon = 1.0e-12 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %cls = bert.select_token %n {index = 0 : i64} : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
    %w3 = bert.param "w3" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x64xf32>
    %b3 = bert.param "b3" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w3, %b3 : (tensor<?x64xf32>, tensor<2x64xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

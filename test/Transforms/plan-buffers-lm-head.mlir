// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-mixed-precision=precision=bf16 -bertc-lower-to-target=target=cuda -bertc-schedule-for-memory -bertc-accumulate-in-gemm -bertc-plan-buffers="gemm-workspace=1000" | FileCheck %s

// Llama 3's vocabulary (128256) at seq 4096 with a tied LM head: no tensor of 4096 x 128256
// logits exists (2,101,346,304 bytes in fp32), only the loss's workspace of a chunk of them.
// The chunk: 256 MiB / (128256 x 4 B a row) = 523.2 rows -> 512, the largest power of two.
// The forward's workspace is the block and a loss per token: (512 x 128256 + 4096) x 4 =
// 262,684,672 B; the backward's, the block alone (262,668,288 B), in the same scratch slot.
// The activations are the [4096, 64] bf16 hidden states and their gradients, 1.5 MB; the
// whole arena 412 MB.
// CHECK: bert.plan = #bert.plan<arena_bytes = 412068352,
// CHECK-SAME: scratch = [[[SCRATCH:[0-9]+]], 262684672], inputs = [410436864, 32768], activations = [410469632, 1573124]
// CHECK: bert.lm_head_loss {{.*}}bert.workspace = [[SCRATCH]] : i64, token_chunk = 512 : i64
// The weight's gradient adds into the table's slot chunk by chunk; so do the embedding's rows.
// CHECK: bert.accumulate_lm_head_loss_grad {{.*}}bert.workspace = [[SCRATCH]] : i64, token_chunk = 512 : i64
// CHECK: bert.accumulate_embedding_grad
module attributes {bert.max_batch = 1 : i64, bert.max_seq = 4096 : i64, bert.train = #bert.train<batch = 1, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 128256, type_vocab = 2, task = "token-classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?x?xi32>
    %t = bert.param "model.embed_tokens.weight" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<128256x64xf32>
    %x = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<128256x64xf32>) -> tensor<?x?x64xf32>
    %w = bert.param "model.norm.weight" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<64xf32>
    %h = bert.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %loss = bert.lm_head_loss %h, %t, %labels : (tensor<?x?x64xf32>, tensor<128256x64xf32>, tensor<?x?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

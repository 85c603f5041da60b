// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64" | FileCheck %s --check-prefix=FUSED
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64 target=cuda" | FileCheck %s --check-prefix=CUDA
// RUN: not bertc-opt %s -bertc-plan-buffers="target=tpu" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda attention-head-chunk=2" -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64" | FileCheck %s --check-prefix=CHUNKED

// Grouped-query attention (2 query heads of 4 dims over 1 key/value head, seq 4, batch 2)
// needs more kernel memory than BERT's: the backwards add each key/value head's dk and dv
// up over its group in fp32 before rounding them once.
//
// Fused: the CPU kernels' scratch is 2 [seq, seq] matrices, the unused [seq] row and the
// group's dk and dv, [seq, d] each: 32 + 4 + 32 = 68 floats = 272 B, aligned 320 (without
// the group sums 36 floats, 192 B); then the CUDA backward's workspace, each row's term and
// the dropout mask's words, (16 + 16) x 4 = 128 B @3904. 320 + 128 = 448.
// FUSED: bert.plan = #bert.plan<arena_bytes = 5888,
// FUSED-SAME: scratch = [3584, 448],
// FUSED: bert.attention_grad {{.*}}bert.workspace = 3904 : i64
//
// The same for the CUDA trainer: its fused kernels need no CPU scratch, so the backward's
// workspace opens the region and the arena is 320 B smaller.
// CUDA: bert.plan = #bert.plan<arena_bytes = 5568,
// CUDA-SAME: scratch = [3584, 128],
// CUDA: bert.attention_grad {{.*}}bert.workspace = 3584 : i64
// UNKNOWN: error: -bertc-plan-buffers: unknown target 'tpu' (expected cpu or cuda)
//
// Chunked (both heads at a time, one group): no scratch; the backward's workspace is two
// score blocks of 2 heads x 2 sequences x [4, 4] (64 floats each) and the chunk's dk and dv
// per query head, 2 x 2 x [4, 4] (64 floats each): 256 floats = 1024 B.
// CHUNKED: bert.plan = #bert.plan<arena_bytes = 6464,
// CHUNKED-SAME: scratch = [3584, 1024],
// CHUNKED: bert.attention {{.*}}bert.workspace = 3584 : i64
// CHUNKED: bert.attention_grad {{.*}}bert.workspace = 3584 : i64
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4 : i64, bert.train = #bert.train<batch = 2, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %mask = bert.input "attention_mask" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %tk = bert.param "tk" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x4xf32>
    %kv = bert.embedding %ids, %tk : (tensor<?x?xi32>, tensor<16x4xf32>) -> tensor<?x?x4xf32>
    %a, %lse = bert.attention %e, %kv, %kv, %mask {heads = 2 : i64, kv_heads = 1 : i64, causal, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
    %cls = bert.select_token %a {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

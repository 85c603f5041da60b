// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-rematerialize="arena-budget=2000000" | FileCheck %s --check-prefix=FITS
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-rematerialize="arena-budget=920000" | FileCheck %s --check-prefix=EMBED
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-rematerialize="arena-budget=920000" -bertc-schedule-for-memory -bertc-plan-buffers | FileCheck %s --check-prefix=EMBED-PLAN
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-rematerialize="arena-budget=900000" | FileCheck %s --check-prefix=DENSE
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-rematerialize="arena-budget=900000" -bertc-schedule-for-memory -bertc-plan-buffers | FileCheck %s --check-prefix=DENSE-PLAN
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-rematerialize="arena-budget=500000" -bertc-schedule-for-memory -bertc-plan-buffers | FileCheck %s --check-prefix=DENSE-PLAN

// A feed-forward block with a residual at batch 16 x seq 8 = 128 rows:
//   x = embedding [128, 64] (32768 B), h = dense(x) and g = gelu(h) [128, 256]
//   (131072 B each), r = add(dense(g), x), then LayerNorm and a classifier.
// Kept for the backward: x (d w1), h (gelu_grad), g (d w2), r (layernorm_grad).
// Keeping everything plans to 933376 B: 539392 of fixed regions (parameters, their
// gradients and moments, scratch, inputs) + 393732 of tensors, rounded to 256.
//
// Recompute costs, roofline on the cpu model (sgemm 100 GFLOP/s, loops 12 GFLOP/s,
// 10 GB/s, 1 us per kernel):
//   x = embedding: a gather, 0 flops; the ids and each row read and written,
//                  512 + 2*32768 = 66048 B (6.60 us)                         -> 7.60 us
//   h = dense:     2*128*64*256 + 128*256 = 4227072 flops (42.27 us),
//                  32768 + 65536 + 1024 + 131072 = 230400 B (23.04 us)       -> 43.27 us
//   g = gelu:      16*32768 = 524288 flops (43.69 us), 262144 B (26.21 us)   -> 44.69 us
// Recomputing g saves nothing: its clone is made where d w2 reads it, and g is live
// there either way. Recomputing x frees 32768 B over the peak, recomputing h frees
// 131072 B (g then reuses h's bytes, and h's clone those of g).

// The step fits as it is: the module is unchanged.
// FITS-NOT: bert.recompute
// FITS-LABEL: func.func @micro_step
// FITS-COUNT-1: bert.embedding
// FITS-NOT: bert.embedding

// 920000 B asks for 13376 B less: x alone does it (900608 B) at 7.60 us, where h would
// cost 43.27 us. The clone is placed right before the backward's only reader of x, the
// gradient of w1, which reads the clone.
// EMBED: bert.recompute = [{flops = 0 : i64, name = "embeddings", op = "bert.embedding", origin = "model.toml:2:1"}]
// EMBED-LABEL: func.func @micro_step
// EMBED: %[[X:.*]] = bert.embedding
// EMBED: bert.linear %[[X]]
// EMBED: bert.add %{{.*}}, %[[X]]
// EMBED: %[[XC:.*]] = bert.embedding
// EMBED-NEXT: bert.linear_grad_weight %{{.*}}, %[[XC]]
// The plan adds the LayerNorm's kernel workspace (16 x 8 rows x 2 fp32 = 1024 B) to the
// 900608 B of the rest.
// EMBED-PLAN: arena_bytes = 901632

// 900000 B: x alone leaves 901632 B, 1632 too many; x and g together still 901632.
// h is the cheapest that fits (835584 B); its clone reads the kept x and feeds
// gelu_grad. A budget no plan meets (500000 B) leaves the plan that saves most: the same.
// DENSE: bert.recompute = [{flops = 4227072 : i64, name = "ffn.dense", op = "bert.linear", origin = "model.toml:3:1"}]
// DENSE-LABEL: func.func @micro_step
// DENSE: %[[X:.*]] = bert.embedding
// DENSE: %[[H:.*]] = bert.linear %[[X]]
// DENSE: bert.gelu %[[H]]
// DENSE: %[[HC:.*]] = bert.linear %[[X]]
// DENSE-NEXT: bert.gelu_grad %{{.*}}, %[[HC]]
// DENSE-PLAN: arena_bytes = 835584

module attributes {bert.max_batch = 16 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 16, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x64xf32>
    %x = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x64xf32>) -> tensor<?x?x64xf32> loc(fused["embeddings"("model.toml":2:1)])
    %w1 = bert.param "w1" {group = "ffn", trainable = true, decay = true, init = "normal"} : tensor<256x64xf32>
    %b1 = bert.param "b1" {group = "ffn", trainable = true, decay = false, init = "zeros"} : tensor<256xf32>
    %h = bert.linear %x, %w1, %b1 : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<?x?x256xf32> loc(fused["ffn.dense"("model.toml":3:1)])
    %g = bert.gelu %h : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32> loc(fused["ffn.gelu"("model.toml":4:1)])
    %w2 = bert.param "w2" {group = "ffn", trainable = true, decay = true, init = "normal"} : tensor<64x256xf32>
    %b2 = bert.param "b2" {group = "ffn", trainable = true, decay = false, init = "zeros"} : tensor<64xf32>
    %o = bert.linear %g, %w2, %b2 : (tensor<?x?x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %r = bert.add %o, %x : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
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

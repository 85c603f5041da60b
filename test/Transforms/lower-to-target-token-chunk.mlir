// RUN: bertc-opt %s -split-input-file -bertc-lower-to-target | FileCheck %s --check-prefix=DEFAULT
// RUN: bertc-opt %s -split-input-file -bertc-lower-to-target="target=cuda lm-head-token-chunk=3" | FileCheck %s --check-prefix=PINNED
// RUN: bertc-opt %s -split-input-file -bertc-lower-to-target="lm-head-token-chunk=100" | FileCheck %s --check-prefix=CAPPED
// RUN: not bertc-opt %s -split-input-file -bertc-lower-to-target="lm-head-token-chunk=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// Every LM head op of a module gets the same chunk, on either target. By default: the
// largest power of two whose fp32 [chunk, vocab] block is at most 256 MiB, at most the
// plan's tokens. Vocabulary 128256 (Llama 3): 268,435,456 / 513,024 B a row = 523.2 -> 512,
// below the 2 x 4096 = 8192 tokens.
// DEFAULT-LABEL: func.func @llama3
// DEFAULT: bert.lm_head_loss {{.*}}token_chunk = 512 : i64
// DEFAULT: bert.lm_head_loss_grad {{.*}}token_chunk = 512 : i64
// Pinned: 3 tokens at a time; 100, below the 8192 tokens, as it is.
// PINNED-LABEL: func.func @llama3
// PINNED: bert.lm_head_loss {{.*}}token_chunk = 3 : i64
// PINNED: bert.lm_head_loss_grad {{.*}}token_chunk = 3 : i64
// CAPPED-LABEL: func.func @llama3
// CAPPED: bert.lm_head_loss {{.*}}token_chunk = 100 : i64
// NEGATIVE: error: -bertc-lower-to-target: lm-head-token-chunk -1 is negative
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4096 : i64} {
  func.func @llama3(%h: tensor<?x?x64xbf16>, %w: tensor<128256x64xbf16>, %labels: tensor<?x?xi32>, %dloss: tensor<f32>) {
    %loss = bert.lm_head_loss %h, %w, %labels : (tensor<?x?x64xbf16>, tensor<128256x64xbf16>, tensor<?x?xi32>) -> tensor<f32>
    %dh, %dw = bert.lm_head_loss_grad %dloss, %h, %w, %labels : (tensor<f32>, tensor<?x?x64xbf16>, tensor<128256x64xbf16>, tensor<?x?xi32>) -> (tensor<?x?x64xbf16>, tensor<128256x64xf32>)
    return
  }
}

// -----

// A small vocabulary: the block bound allows far more rows than the 2 x 4 = 8 tokens, so
// the chunk is all of them; a pinned chunk above them is capped at them too.
// DEFAULT-LABEL: func.func @small
// DEFAULT: bert.lm_head_loss {{.*}}token_chunk = 8 : i64
// PINNED-LABEL: func.func @small
// PINNED: bert.lm_head_loss {{.*}}token_chunk = 3 : i64
// CAPPED-LABEL: func.func @small
// CAPPED: bert.lm_head_loss {{.*}}token_chunk = 8 : i64
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4 : i64} {
  func.func @small(%h: tensor<?x?x8xf32>, %w: tensor<100x8xf32>, %labels: tensor<?x?xi32>) {
    %loss = bert.lm_head_loss %h, %w, %labels : (tensor<?x?x8xf32>, tensor<100x8xf32>, tensor<?x?xi32>) -> tensor<f32>
    return
  }
}

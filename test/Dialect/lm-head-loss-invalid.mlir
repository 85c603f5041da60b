// RUN: bertc-opt %s -split-input-file -verify-diagnostics
// What the LM head loss's kernels rely on: hidden [batch, seq, width], the weight
// [vocab, width] of hidden's storage type, labels [batch, seq], a chunk that is not negative.

func.func @width_mismatch(%h: tensor<?x?x64xf32>, %w: tensor<100x32xf32>, %labels: tensor<?x?xi32>) {
  // expected-error @+1 {{weight has last dimension 32, expected 64}}
  %loss = bert.lm_head_loss %h, %w, %labels : (tensor<?x?x64xf32>, tensor<100x32xf32>, tensor<?x?xi32>) -> tensor<f32>
  return
}

// -----

func.func @labels_rank(%h: tensor<?x?x64xf32>, %w: tensor<100x64xf32>, %labels: tensor<?xi32>) {
  // expected-error @+1 {{labels must have rank 2}}
  %loss = bert.lm_head_loss %h, %w, %labels : (tensor<?x?x64xf32>, tensor<100x64xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

func.func @labels_shape(%h: tensor<2x?x64xf32>, %w: tensor<100x64xf32>, %labels: tensor<3x?xi32>) {
  // expected-error @+1 {{labels 'tensor<3x?xi32>' must be the [batch, seq] of hidden 'tensor<2x?x64xf32>'}}
  %loss = bert.lm_head_loss %h, %w, %labels : (tensor<2x?x64xf32>, tensor<100x64xf32>, tensor<3x?xi32>) -> tensor<f32>
  return
}

// -----

func.func @negative_chunk(%h: tensor<?x?x64xf32>, %w: tensor<100x64xf32>, %labels: tensor<?x?xi32>) {
  // expected-error @+1 {{token_chunk must not be negative, got -1}}
  %loss = bert.lm_head_loss %h, %w, %labels {token_chunk = -1 : i64} : (tensor<?x?x64xf32>, tensor<100x64xf32>, tensor<?x?xi32>) -> tensor<f32>
  return
}

// -----

// The kernels take one storage type for both GEMM operands.
func.func @storage_mismatch(%h: tensor<?x?x64xbf16>, %w: tensor<100x64xf32>, %labels: tensor<?x?xi32>) {
  // expected-error @+1 {{weight 'tensor<100x64xf32>' and hidden 'tensor<?x?x64xbf16>' must share a storage type}}
  %loss = bert.lm_head_loss %h, %w, %labels : (tensor<?x?x64xbf16>, tensor<100x64xf32>, tensor<?x?xi32>) -> tensor<f32>
  return
}

// -----

func.func @scale(%h: tensor<?x?x64xf32>, %w: tensor<100x64xf32>, %labels: tensor<?x?xi32>) {
  // expected-error @+1 {{scale must be positive, got 0}}
  %loss = bert.lm_head_loss %h, %w, %labels {scale = 0.0 : f32} : (tensor<?x?x64xf32>, tensor<100x64xf32>, tensor<?x?xi32>) -> tensor<f32>
  return
}

// -----

func.func @grad_weight_shape(%dloss: tensor<f32>, %h: tensor<?x?x64xf32>, %w: tensor<100x64xf32>, %labels: tensor<?x?xi32>) {
  // expected-error @+1 {{weight gradient}}
  %dh, %dw = bert.lm_head_loss_grad %dloss, %h, %w, %labels : (tensor<f32>, tensor<?x?x64xf32>, tensor<100x64xf32>, tensor<?x?xi32>) -> (tensor<?x?x64xf32>, tensor<64x100xf32>)
  return
}

// -----

func.func @grad_hidden_type(%dloss: tensor<f32>, %h: tensor<?x?x64xbf16>, %w: tensor<100x64xbf16>, %labels: tensor<?x?xi32>) {
  // expected-error @+1 {{hidden gradient}}
  %dh = bert.lm_head_loss_grad %dloss, %h, %w, %labels : (tensor<f32>, tensor<?x?x64xbf16>, tensor<100x64xbf16>, tensor<?x?xi32>) -> tensor<?x?x64xf32>
  return
}

// -----

// The accumulating form adds into a trainable parameter's slot.
func.func @accumulate_frozen(%dloss: tensor<f32>, %h: tensor<?x?x64xf32>, %labels: tensor<?x?xi32>) {
  %w = bert.param "lm_head.weight" {group = "head", trainable = false, decay = true, init = "normal"} : tensor<100x64xf32>
  // expected-error @+1 {{parameter 'lm_head.weight' is frozen}}
  %dh = bert.accumulate_lm_head_loss_grad %w, %dloss, %h, %labels : tensor<100x64xf32>, tensor<f32>, tensor<?x?x64xf32>, tensor<?x?xi32> -> tensor<?x?x64xf32>
  return
}

// RUN: bertc-opt %s -split-input-file -verify-diagnostics

func.func @linear_in_features(%x: tensor<?x?x8xf32>, %w: tensor<4x6xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{input has last dimension 8, expected 6}}
  %y = bert.linear %x, %w, %b : (tensor<?x?x8xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{bias has last dimension 5, expected 4}}
  %y = bert.linear %x, %w, %b : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<5xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{must keep the leading dimensions}}
  %y = bert.linear %x, %w, %b : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  return
}

// -----

// TF32 rounds fp32 operands; 16-bit ones have their own tensor cores.
func.func @linear_tf32_bf16(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>, %b: tensor<4xbf16>, %dy: tensor<?x4xbf16>) {
  // expected-error @+1 {{has tf32 but its operands are 'bf16', not f32}}
  %y = bert.linear %x, %w, %b {tf32} : (tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>) -> tensor<?x4xbf16>
  return
}

// -----

func.func @linear_grad_weight_tf32_bf16(%x: tensor<?x8xbf16>, %dy: tensor<?x4xbf16>) {
  // expected-error @+1 {{has tf32 but its operands are 'bf16', not f32}}
  %dw = bert.linear_grad_weight %dy, %x {tf32} : (tensor<?x4xbf16>, tensor<?x8xbf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<?x?x10xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{hidden size 10 is not divisible by 4 heads}}
  %c, %lse = bert.attention %q, %q, %q, %m {heads = 4 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x10xf32>, tensor<?x?x10xf32>, tensor<?x?x10xf32>, tensor<?x?xi32>) -> (tensor<?x?x10xf32>, tensor<?x4x?xf32>)
  return
}

// -----

// The lse is [batch, heads, seq]: here its heads dimension disagrees with the attribute.
func.func @attention_lse_heads(%q: tensor<?x?x8xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{lse 'tensor<?x4x?xf32>' must be [batch, 2 heads, seq] of query 'tensor<?x?x8xf32>'}}
  %c, %lse = bert.attention %q, %q, %q, %m {heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x4x?xf32>)
  return
}

// -----

// The backward's forward output must be typed as the query.
func.func @attention_grad_output(%q: tensor<?x?x8xf32>, %m: tensor<?x?xi32>, %ctx: tensor<?x?x8xbf16>, %lse: tensor<?x2x?xf32>) {
  // expected-error @+1 {{query 'tensor<?x?x8xf32>' and output 'tensor<?x?x8xbf16>' must have the same type}}
  %dq, %dk, %dv = bert.attention_grad %q, %q, %q, %q, %m, %ctx, %lse {heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xbf16>, tensor<?x2x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return
}

// -----

// A head chunk is 0 (the fused kernels) or 1 to the heads.
func.func @attention_head_chunk(%q: tensor<?x?x8xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{head_chunk 3 must be 0 (fused) or 1 to 2 (the heads)}}
  %c, %lse = bert.attention %q, %q, %q, %m {heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32, head_chunk = 3 : i64} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  return
}

// -----

func.func @attention_grad_head_chunk(%q: tensor<?x?x8xf32>, %m: tensor<?x?xi32>, %lse: tensor<?x2x?xf32>) {
  // expected-error @+1 {{head_chunk -1 must be 0 (fused) or 1 to 2 (the heads)}}
  %dq, %dk, %dv = bert.attention_grad %q, %q, %q, %q, %m, %q, %lse {heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32, head_chunk = -1 : i64} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x2x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return
}

// -----

// TF32 marks tensor-core attention's GEMMs: the fused kernels have none ...
func.func @attention_tf32_fused(%q: tensor<?x?x8xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{has tf32 but head_chunk 0: the fused kernel has no GEMMs}}
  %c, %lse = bert.attention %q, %q, %q, %m {heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32, tf32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  return
}

// -----

// ... and 16-bit ones run on 16-bit tensor cores.
func.func @attention_grad_tf32_bf16(%q: tensor<?x?x8xbf16>, %m: tensor<?x?xi32>, %lse: tensor<?x2x?xf32>) {
  // expected-error @+1 {{has tf32 but its operands are 'bf16', not f32}}
  %dq, %dk, %dv = bert.attention_grad %q, %q, %q, %q, %m, %q, %lse {heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32, head_chunk = 1 : i64, tf32} : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?xi32>, tensor<?x?x8xbf16>, tensor<?x2x?xf32>) -> (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16>)
  return
}

// -----

func.func @dropout_rate(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{rate must be in [0, 1), got 1}}
  %y = bert.dropout %x {rate = 1.0 : f32, stream = 0 : i32} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @layernorm_gamma(%x: tensor<?x8xf32>, %g: tensor<7xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{gamma has last dimension 7, expected 8}}
  %y = bert.layernorm %x, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x8xf32>, tensor<7xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @unknown_input() {
  // expected-error @+1 {{unknown input 'segment_ids'}}
  %x = bert.input "segment_ids" : tensor<?x?xi32>
  return
}

// -----

func.func @dynamic_param() {
  // expected-error @+1 {{parameter 'w' must have a static shape}}
  %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<?x8xf32>
  return
}

// -----

// init_scale narrows a normal init; zeros and ones have no scale.
func.func @scaled_zeros() {
  // expected-error @+1 {{parameter 'b': init_scale needs init = normal}}
  %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros", init_scale = 0.5 : f64} : tensor<8xf32>
  return
}

// -----

func.func @scale_not_positive() {
  // expected-error @+1 {{parameter 'w': init_scale must be positive}}
  %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal", init_scale = 0.0 : f64} : tensor<8x8xf32>
  return
}

// -----

func.func @frozen_update(%g: tensor<8xf32>) {
  %w = bert.param "w" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<8xf32>
  // expected-error @+1 {{parameter 'w' is frozen}}
  bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.0 : f64} : tensor<8xf32>
  return
}

// -----

// bitsandbytes' blocks are 256 or 2048 values.
func.func @odd_state_block() {
  %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8xf32>
  // expected-error @+1 {{state_block must be 256 or 2048, not 512}}
  bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.0 : f64, state_block = 512} : tensor<8xf32>
  return
}

// -----

// An update in the backward takes an fp32 gradient of its parameter's shape.
func.func @update_gradient_bf16(%g: tensor<8xbf16>) {
  %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8xbf16>
  // expected-error @+1 {{gradient must be f32, not 'tensor<8xbf16>'}}
  bert.adamw %w, %g {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.0 : f64} : tensor<8xbf16>, tensor<8xbf16>
  return
}

// -----

func.func @update_gradient_shape(%g: tensor<4xf32>) {
  %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8xf32>
  // expected-error @+1 {{parameter 'tensor<8xf32>' and gradient 'tensor<4xf32>' must have the same shape}}
  bert.adamw %w, %g {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.0 : f64} : tensor<8xf32>, tensor<4xf32>
  return
}

// -----

func.func @accumulate_not_param(%w: tensor<8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{operand must be a bert.param}}
  bert.accumulate_grad %w, %g : tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @embedding_rank(%ids: tensor<?x?xi32>, %t: tensor<16x8xf32>) {
  // expected-error @+1 {{result must have rank 3}}
  %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @embedding_padding_row(%ids: tensor<?x?xi32>, %t: tensor<16x8xf32>) {
  // expected-error @+1 {{padding_idx 16 is not a row of the 16-row table}}
  %e = bert.embedding %ids, %t {padding_idx = 16 : i64} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_grad_padding_row(%dy: tensor<?x?x8xf32>, %ids: tensor<?x?xi32>) {
  // expected-error @+1 {{padding_idx -1 is not a row of the 16-row table}}
  %g = bert.embedding_grad %dy, %ids {padding_idx = -1 : i64} : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<16x8xf32>
  return
}

// -----

// A flattened row must hold a whole number of tokens.
func.func @flatten_partial_token(%x: tensor<?x?x8xf32>) {
  // expected-error@+1 {{'bert.flatten' op flattened width 100 is not a whole number of tokens of 8 features}}
  %f = bert.flatten %x : (tensor<?x?x8xf32>) -> tensor<?x100xf32>
  return
}

// -----

// Per-token logits need per-token labels.
func.func @cross_entropy_label_rank(%logits: tensor<?x?x5xf32>, %labels: tensor<?xi32>) {
  // expected-error @+1 {{labels must have rank 2}}
  %loss = bert.cross_entropy %logits, %labels : (tensor<?x?x5xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_scale(%logits: tensor<?x2xf32>, %labels: tensor<?xi32>) {
  // expected-error @+1 {{scale must be positive, got 0}}
  %loss = bert.cross_entropy %logits, %labels {scale = 0.0 : f32} : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

func.func @transpose_shape(%x: tensor<?x?x2xf32>) {
  // expected-error @+1 {{must be the input 'tensor<?x?x2xf32>' with its last two dimensions swapped}}
  %y = bert.transpose %x : (tensor<?x?x2xf32>) -> tensor<?x?x2xf32>
  return
}

// -----

// The regression head predicts one number per row.
func.func @mse_loss_width(%predictions: tensor<?x3xf32>, %targets: tensor<?xf32>) {
  // expected-error @+1 {{predictions has last dimension 3, expected 1}}
  %loss = bert.mse_loss %predictions, %targets : (tensor<?x3xf32>, tensor<?xf32>) -> tensor<f32>
  return
}

// -----

func.func @float_input_ids() {
  // expected-error @+1 {{input 'input_ids' must be int32}}
  %ids = bert.input "input_ids" : tensor<?x?xf32>
  return
}

// -----

func.func @float_token_labels() {
  // expected-error @+1 {{labels must be [batch] (int32 or f32) or [batch, n] int32}}
  %labels = bert.input "labels" : tensor<?x?xf32>
  return
}

// -----

func.func @cast_changes_shape(%x: tensor<4x8xbf16>) {
  // expected-error @+1 {{input 'tensor<4x8xbf16>' and result 'tensor<4x6xf32>' must have the same shape}}
  %y = bert.cast %x : (tensor<4x8xbf16>) -> tensor<4x6xf32>
  return
}

// -----

func.func @select_token_negative_index(%h: tensor<?x16x8xf32>) {
  // expected-error @+1 {{token index -1 is outside the sequence}}
  %cls = bert.select_token %h {index = -1 : i64} : (tensor<?x16x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @select_token_past_the_sequence(%h: tensor<?x16x8xf32>) {
  // expected-error @+1 {{token index 16 is outside the sequence}}
  %cls = bert.select_token %h {index = 16 : i64} : (tensor<?x16x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

// The weight-gradient GEMM into a slot needs a parameter of [out, in] matching dy and x.
func.func @accumulate_gemm_shapes(%dy: tensor<?x8xf32>, %x: tensor<?x4xf32>) {
  %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
  // expected-error @+1 {{input has last dimension 4, expected 16}}
  bert.accumulate_linear_grad_weight %w, %dy, %x : tensor<8x16xf32>, tensor<?x8xf32>, tensor<?x4xf32>
  return
}

// -----

// The bias-gradient sum into a slot needs a parameter of [out] matching dy.
func.func @accumulate_bias_shapes(%dy: tensor<?x8xf32>) {
  %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<4xf32>
  // expected-error @+1 {{result gradient has last dimension 8, expected 4}}
  bert.accumulate_bias_grad %b, %dy : tensor<4xf32>, tensor<?x8xf32>
  return
}

// -----

// The scatter-add into a table's slot needs a [vocab, hidden] parameter matching dy's rows.
func.func @accumulate_embedding_shapes(%dy: tensor<?x?x8xf32>, %ids: tensor<?x?xi32>) {
  %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<30x4xf32>
  // expected-error @+1 {{result gradient has last dimension 8, expected 4}}
  bert.accumulate_embedding_grad %t, %dy, %ids : tensor<30x4xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>
  return
}

// -----

// The scatter-add into a slot adds into a trainable parameter's.
func.func @accumulate_embedding_frozen(%dy: tensor<?x?x4xf32>, %ids: tensor<?x?xi32>) {
  %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<30x4xf32>
  // expected-error @+1 {{parameter 't' is frozen}}
  bert.accumulate_embedding_grad %t, %dy, %ids : tensor<30x4xf32>, tensor<?x?x4xf32>, tensor<?x?xi32>
  return
}

// -----

// A backward fused with a bias gradient sums d input, whose last dimension is the bias's.
func.func @gelu_bias_shapes(%dy: tensor<?x8xf32>) {
  %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<4xf32>
  // expected-error @+1 {{input gradient has last dimension 8, expected 4}}
  %dx = bert.gelu_grad_accumulate_bias %b, %dy, %dy : tensor<4xf32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

// ... and writes d input in d y's type.
func.func @dropout_bias_types(%dy: tensor<?x8xf32>) {
  %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
  // expected-error @+1 {{result gradient 'tensor<?x8xf32>' and input gradient 'tensor<?x8xbf16>' must have the same type}}
  %dx = bert.dropout_grad_accumulate_bias %b, %dy {rate = 0.1 : f32, stream = 0 : i32} : tensor<8xf32>, tensor<?x8xf32> -> tensor<?x8xbf16>
  return
}

// -----

// The forms that write the bias gradient: a [cols] sum of d input.
func.func @gelu_bias_sum_shape(%dy: tensor<?x8xf32>) {
  // expected-error @+1 {{input gradient has last dimension 8, expected 4}}
  %dx, %db = bert.gelu_grad_bias %dy, %dy : (tensor<?x8xf32>, tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @dropout_bias_sum_rank(%dy: tensor<?x8xf32>) {
  // expected-error @+1 {{bias gradient must have rank 1, got 'tensor<2x8xf32>'}}
  %dx, %db = bert.dropout_grad_bias %dy {rate = 0.1 : f32, stream = 0 : i32} : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<2x8xf32>)
  return
}

// -----

// ... into a trainable parameter's slot, at a rate in [0, 1).
func.func @dropout_bias_rate(%dy: tensor<?x8xf32>) {
  %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
  // expected-error @+1 {{rate must be in [0, 1), got 1.5}}
  %dx = bert.dropout_grad_accumulate_bias %b, %dy {rate = 1.5 : f32, stream = 0 : i32} : tensor<8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

// The GEMM's addend is a tensor of its result's type.
func.func @linear_grad_input_add_addend(%dy: tensor<?x2xf32>, %w: tensor<2x8xf32>, %a: tensor<?x8xbf16>) {
  // expected-error @+1 {{input gradient 'tensor<?x8xf32>' and addend 'tensor<?x8xbf16>' must have the same type}}
  %dx = bert.linear_grad_input_add %dy, %w, %a : (tensor<?x2xf32>, tensor<2x8xf32>, tensor<?x8xbf16>) -> tensor<?x8xf32>
  return
}

// -----

// The LayerNorm backward into slots needs trainable gamma and beta of [features].
func.func @accumulate_layernorm_frozen(%dy: tensor<?x8xf32>, %x: tensor<?x8xf32>) {
  %g = bert.param "g" {group = "embeddings", trainable = false, decay = false, init = "ones"} : tensor<8xf32>
  %b = bert.param "b" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
  // expected-error @+1 {{parameter 'g' is frozen}}
  %dx = bert.accumulate_layernorm_grad %g, %b, %dy, %x {epsilon = 1.0e-12 : f32} : tensor<8xf32>, tensor<8xf32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @accumulate_layernorm_width(%dy: tensor<?x6xf32>, %x: tensor<?x6xf32>) {
  %g = bert.param "g" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<8xf32>
  %b = bert.param "b" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
  // expected-error @+1 {{gamma has last dimension 8, expected 6}}
  %dx = bert.accumulate_layernorm_grad %g, %b, %dy, %x {epsilon = 1.0e-12 : f32} : tensor<8xf32>, tensor<8xf32>, tensor<?x6xf32>, tensor<?x6xf32> -> tensor<?x6xf32>
  return
}

// -----

// The fused residual add and LayerNorm: addends, sum and output of one type.
func.func @add_layernorm_addends(%a: tensor<?x8xf32>, %b: tensor<?x8xbf16>, %g: tensor<8xf32>) {
  // expected-error @+1 {{lhs 'tensor<?x8xf32>' and rhs 'tensor<?x8xbf16>' must have the same type}}
  %s, %y = bert.add_layernorm %a, %b, %g, %g {epsilon = 1.0e-12 : f32} : (tensor<?x8xf32>, tensor<?x8xbf16>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
  return
}

// -----

func.func @add_layernorm_epsilon(%a: tensor<?x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{epsilon must be positive}}
  %s, %y = bert.add_layernorm %a, %a, %g, %g {epsilon = 0.0 : f32} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
  return
}

// -----

func.func @add_layernorm_dropout(%a: tensor<?x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{dropout must be in [0, 1), got 1}}
  %s, %y = bert.add_layernorm %a, %a, %g, %g {epsilon = 1.0e-12 : f32, dropout = 1.0 : f32, stream = 0 : i32} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
  return
}

// -----

// GELU's approximation is one of torch's: none (erf) or tanh.
func.func @gelu_approximation_unknown(%x: tensor<?x8xf32>) {
  // expected-error @+2 {{expected ::mlir::bert::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse Bert_GeluApproximationAttr parameter 'value'}}
  %y = bert.gelu %x {approximate = #bert.gelu_approximation<erf>} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @gelu_approximation_not_enum(%dy: tensor<?x8xf32>) {
  // expected-error @+1 {{attribute 'approximate' failed to satisfy constraint: how a GELU computes the normal CDF}}
  %dx = bert.gelu_grad %dy, %dy {approximate = 1 : i32} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// RUN: bertc-opt %s -split-input-file -verify-diagnostics

func.func @rms_norm_weight(%x: tensor<?x?x8xf32>, %w: tensor<6xf32>) {
  // expected-error @+1 {{weight has last dimension 6, expected 8}}
  %y = bert.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x?x8xf32>, tensor<6xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @rms_norm_epsilon(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{epsilon must be positive, got 0}}
  %y = bert.rms_norm %x, %w {epsilon = 0.0 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @rms_norm_grad_weight(%dy: tensor<?x?x8xf32>, %x: tensor<?x?x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{weight gradient}}
  %dx, %dw = bert.rms_norm_grad %dy, %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @mul_shapes(%a: tensor<?x8xf32>, %b: tensor<?x4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = bert.mul %a, %b : (tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @silu_grad_type(%dy: tensor<?x8xf32>, %x: tensor<?x8xbf16>) {
  // expected-error @+1 {{input}}
  %dx = bert.silu_grad %dy, %x : (tensor<?x8xf32>, tensor<?x8xbf16>) -> tensor<?x8xf32>
  return
}

// -----

func.func @rope_head_dim(%x: tensor<?x?x8xf32>, %pos: tensor<?x?xi32>) {
  // expected-error @+1 {{input's last dimension 8 must be 2 heads of 6 (2 x 3 inv_freq values)}}
  %y = bert.rope %x, %pos {heads = 2 : i64, inv_freq = array<f32: 1.0, 0.5, 0.25>} : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @rope_positions(%x: tensor<2x5x8xf32>, %pos: tensor<2x4xi32>) {
  // expected-error @+1 {{must be the [batch, seq] of input}}
  %y = bert.rope %x, %pos {heads = 2 : i64, inv_freq = array<f32: 1.0, 0.1>} : (tensor<2x5x8xf32>, tensor<2x4xi32>) -> tensor<2x5x8xf32>
  return
}

// -----

func.func @rope_no_frequencies(%x: tensor<?x?x8xf32>, %pos: tensor<?x?xi32>) {
  // expected-error @+1 {{inv_freq must hold head_dim / 2 values, got none}}
  %y = bert.rope %x, %pos {heads = 2 : i64, inv_freq = array<f32>} : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @rope_grad_heads(%dy: tensor<?x?x8xf32>, %pos: tensor<?x?xi32>) {
  // expected-error @+1 {{heads must be positive, got 0}}
  %dx = bert.rope_grad %dy, %pos {heads = 0 : i64, inv_freq = array<f32: 1.0, 0.1>} : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return
}

// RUN: bertc-opt %s -split-input-file -verify-diagnostics
// A linear without bias is checked as one with: the weight against the input and result.

func.func @no_bias_in_features(%x: tensor<?x?x8xf32>, %w: tensor<4x6xf32>) {
  // expected-error @+1 {{input has last dimension 8, expected 6}}
  %y = bert.linear %x, %w : (tensor<?x?x8xf32>, tensor<4x6xf32>) -> tensor<?x?x4xf32>
  return
}

// -----

func.func @no_bias_out_features(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{result has last dimension 5, expected 4}}
  %y = bert.linear %x, %w : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x5xf32>
  return
}

// -----

func.func @no_bias_weight_rank(%x: tensor<?x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{weight must have rank 2}}
  %y = bert.linear %x, %w : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return
}

// -----

// A bias, when given, is still [out].
func.func @bias_rank(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{bias must have rank 1}}
  %y = bert.linear %x, %w, %b : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  return
}

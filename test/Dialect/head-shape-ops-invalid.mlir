// RUN: bertc-opt %s -split-input-file -verify-diagnostics
// The pooling and feature-shaping ops' verifiers: ranks, widths that add up, ranges inside
// the features.

func.func @max_pooled_sequence(%h: tensor<?x?x8xf32>, %mask: tensor<?x?xi32>) {
  // expected-error @+1 {{result must have rank 2}}
  %top = bert.max_tokens %h, %mask : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @max_grad_input_type(%dy: tensor<?x8xf32>, %h: tensor<?x?x8xbf16>, %mask: tensor<?x?xi32>) {
  // expected-error @+1 {{input 'tensor<?x?x8xbf16>' and input gradient 'tensor<?x?x8xf32>' must have the same type}}
  %dh = bert.max_tokens_grad %dy, %h, %mask : (tensor<?x8xf32>, tensor<?x?x8xbf16>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @concat_one_input(%a: tensor<?x8xf32>) {
  // expected-error @+1 {{needs two or more inputs, got 1}}
  %c = bert.concat %a : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @concat_width(%a: tensor<?x8xf32>, %b: tensor<?x4xf32>) {
  // expected-error @+1 {{result has last dimension 16, expected 12}}
  %c = bert.concat %a, %b : (tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @concat_ranks(%a: tensor<?x8xf32>, %b: tensor<?x?x4xf32>) {
  // expected-error @+1 {{input 'tensor<?x?x4xf32>' must keep the element type and leading dimensions of result 'tensor<?x12xf32>'}}
  %c = bert.concat %a, %b : (tensor<?x8xf32>, tensor<?x?x4xf32>) -> tensor<?x12xf32>
  return
}

// -----

func.func @concat_element_types(%a: tensor<?x8xf32>, %b: tensor<?x4xbf16>) {
  // expected-error @+1 {{input 'tensor<?x4xbf16>' must keep the element type and leading dimensions of result 'tensor<?x12xf32>'}}
  %c = bert.concat %a, %b : (tensor<?x8xf32>, tensor<?x4xbf16>) -> tensor<?x12xf32>
  return
}

// -----

func.func @slice_past_the_end(%x: tensor<?x16xf32>) {
  // expected-error @+1 {{features 6 from 12 are outside the 16 of input}}
  %s = bert.slice %x {start = 12 : i64} : (tensor<?x16xf32>) -> tensor<?x6xf32>
  return
}

// -----

func.func @slice_negative_start(%x: tensor<?x16xf32>) {
  // expected-error @+1 {{features 6 from -1 are outside the 16 of input}}
  %s = bert.slice %x {start = -1 : i64} : (tensor<?x16xf32>) -> tensor<?x6xf32>
  return
}

// -----

func.func @slice_grad_width(%dy: tensor<?x6xf32>) {
  // expected-error @+1 {{features 6 from 12 are outside the 16 of input gradient}}
  %dx = bert.slice_grad %dy {start = 12 : i64} : (tensor<?x6xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @slice_start_past_int64(%x: tensor<?x16xf32>) {
  // expected-error @+1 {{features 6 from 9223372036854775800 are outside the 16 of input}}
  %s = bert.slice %x {start = 9223372036854775800 : i64} : (tensor<?x16xf32>) -> tensor<?x6xf32>
  return
}

// -----

func.func @concat_grad_past_the_end(%dy: tensor<?x16xf32>) {
  // expected-error @+1 {{features 8 from 10 are outside the 16 of result gradient}}
  %dx = bert.concat_grad %dy {start = 10 : i64} : (tensor<?x16xf32>) -> tensor<?x8xf32>
  return
}

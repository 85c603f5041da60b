// RUN: bertc-opt %s -split-input-file -verify-diagnostics

func.func @infinite_factor(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{factor must be finite}}
  %y = bert.scale %x {factor = 0x7F800000 : f32} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @shape_changed(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = bert.scale %x {factor = 1.0 : f32} : (tensor<?x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @quantized_bytes_wrong() {
  // expected-error @+1 {{parameter 'w': a #bert.quantized<nf4, [96, 64]> weight is a tensor<3520xi8>, got 'tensor<3504xi8>'}}
  %q = bert.param "w" {group = "encoder.layer.0", trainable = false, decay = true, init = "normal",
                       quantized = #bert.quantized<nf4, [96, 64]>} : tensor<3504xi8>
  return
}

// -----

func.func @quantized_trainable() {
  // expected-error @+1 {{parameter 'w': a quantized weight is frozen}}
  %q = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal",
                       quantized = #bert.quantized<nf4, [96, 64]>} : tensor<3520xi8>
  return
}

// -----

func.func @bytes_without_format() {
  // expected-error @+1 {{parameter 'w': only a quantized weight is held as bytes}}
  %q = bert.param "w" {group = "encoder.layer.0", trainable = false, decay = true, init = "normal"} : tensor<3520xi8>
  return
}

// -----

func.func @quantized_vector() {
  // expected-error @+2 {{a quantized weight is a matrix [out, in] of at least one value}}
  %q = bert.param "w" {group = "encoder.layer.0", trainable = false, decay = true, init = "normal",
                       quantized = #bert.quantized<nf4, [96]>} : tensor<3520xi8>
  return
}

// -----

func.func @dequantized_shape(%q: tensor<3520xi8>) {
  // expected-error @+1 {{result 'tensor<64x96xbf16>' must have the weight's shape}}
  %w = bert.dequantize %q {weight = #bert.quantized<nf4, [96, 64]>} : (tensor<3520xi8>) -> tensor<64x96xbf16>
  return
}

// -----

func.func @dequantized_bytes(%q: tensor<3520xi8>) {
  // expected-error @+1 {{a #bert.quantized<int8_rows, [96, 64]> weight is 6528 bytes, got 'tensor<3520xi8>'}}
  %w = bert.dequantize %q {weight = #bert.quantized<int8_rows, [96, 64]>} : (tensor<3520xi8>) -> tensor<96x64xbf16>
  return
}

// -----

func.func @dequantized_as_other() {
  %q = bert.param "w" {group = "encoder.layer.0", trainable = false, decay = true, init = "normal",
                       quantized = #bert.quantized<nf4, [64, 96]>} : tensor<3520xi8>
  // expected-error @+1 {{reads parameter 'w', a #bert.quantized<nf4, [64, 96]> weight, as #bert.quantized<nf4, [96, 64]>}}
  %w = bert.dequantize %q {weight = #bert.quantized<nf4, [96, 64]>} : (tensor<3520xi8>) -> tensor<96x64xbf16>
  return
}

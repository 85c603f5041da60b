// RUN: bertc-opt %s | bertc-opt | FileCheck %s
// Round trip of a LoRA adapter's scaling and of a quantized base weight's dequantization.

// CHECK-LABEL: func.func @scaled
// CHECK: bert.scale %{{.*}} {factor = 2.000000e+00 : f32} : (tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
func.func @scaled(%x: tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16> {
  %y = bert.scale %x {factor = 2.0 : f32} : (tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
  return %y : tensor<?x?x8xbf16>
}

// A QLoRA base weight: its layout's bytes (quantized_weight_layout.h) and the 16-bit values
// its GEMM reads. [96, 64] in NF4: 3072 bytes of codes, 96 fp32 absmaxes (384), the 16-value
// map (64): 3520; double quantized: codes 3072, 96 absmax codes (3168), one nested absmax
// (at 3168, to 3184 aligned), the mean (at 3184, to 3200 aligned), the maps 64 + 1024 (at
// 3200): 4288; int8 rows: 6144 values and 96 fp32 absmaxes: 6528.

// CHECK-LABEL: func.func @quantized_base
// CHECK: %[[Q:.*]] = bert.param "w" {decay = true, group = "encoder.layer.0", init = "normal", quantized = #bert.quantized<nf4, [96, 64]>, trainable = false} : tensor<3520xi8>
// CHECK: bert.dequantize %[[Q]] {weight = #bert.quantized<nf4, [96, 64]>} : (tensor<3520xi8>) -> tensor<96x64xbf16>
// CHECK: quantized = #bert.quantized<nf4_double_quant, [96, 64]>, trainable = false} : tensor<4288xi8>
// CHECK: quantized = #bert.quantized<int8_rows, [96, 64]>, trainable = false} : tensor<6528xi8>
func.func @quantized_base() -> (tensor<96x64xbf16>, tensor<96x64xf32>, tensor<96x64xf16>) {
  %q = bert.param "w" {group = "encoder.layer.0", trainable = false, decay = true, init = "normal",
                       quantized = #bert.quantized<nf4, [96, 64]>} : tensor<3520xi8>
  %w = bert.dequantize %q {weight = #bert.quantized<nf4, [96, 64]>} : (tensor<3520xi8>) -> tensor<96x64xbf16>
  %q2 = bert.param "w2" {group = "encoder.layer.0", trainable = false, decay = true, init = "normal",
                        quantized = #bert.quantized<nf4_double_quant, [96, 64]>} : tensor<4288xi8>
  %w2 = bert.dequantize %q2 {weight = #bert.quantized<nf4_double_quant, [96, 64]>} : (tensor<4288xi8>) -> tensor<96x64xf32>
  %q3 = bert.param "w3" {group = "encoder.layer.0", trainable = false, decay = true, init = "normal",
                        quantized = #bert.quantized<int8_rows, [96, 64]>} : tensor<6528xi8>
  %w3 = bert.dequantize %q3 {weight = #bert.quantized<int8_rows, [96, 64]>} : (tensor<6528xi8>) -> tensor<96x64xf16>
  return %w, %w2, %w3 : tensor<96x64xbf16>, tensor<96x64xf32>, tensor<96x64xf16>
}

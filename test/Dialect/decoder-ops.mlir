// RUN: bertc-opt %s | bertc-opt | FileCheck %s
// Round trip of the decoder ops and their gradient ops.

// CHECK-LABEL: func.func @decoder
func.func @decoder(%x: tensor<?x?x8xbf16>, %w: tensor<8xbf16>, %pos: tensor<?x?xi32>,
                   %dy: tensor<?x?x8xbf16>) {
  // CHECK: bert.rms_norm %{{.*}}, %{{.*}} {epsilon = 9.99999974E-6 : f32} : (tensor<?x?x8xbf16>, tensor<8xbf16>) -> tensor<?x?x8xbf16>
  %n = bert.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x?x8xbf16>, tensor<8xbf16>) -> tensor<?x?x8xbf16>
  // CHECK: bert.rms_norm_grad {{.*}} : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<8xbf16>) -> (tensor<?x?x8xbf16>, tensor<8xf32>)
  %dx, %dw = bert.rms_norm_grad %dy, %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<8xbf16>) -> (tensor<?x?x8xbf16>, tensor<8xf32>)
  // CHECK: bert.silu %{{.*}} : (tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
  %s = bert.silu %n : (tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
  // CHECK: bert.silu_grad
  %ds = bert.silu_grad %dy, %n : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
  // CHECK: bert.mul %{{.*}}, %{{.*}} : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
  %m = bert.mul %s, %n : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
  // CHECK: bert.rope %{{.*}}, %{{.*}} {heads = 2 : i64, inv_freq = array<f32: 1.000000e+00, 1.000000e-01>} : (tensor<?x?x8xbf16>, tensor<?x?xi32>) -> tensor<?x?x8xbf16>
  %r = bert.rope %m, %pos {heads = 2 : i64, inv_freq = array<f32: 1.0, 0.1>} : (tensor<?x?x8xbf16>, tensor<?x?xi32>) -> tensor<?x?x8xbf16>
  // CHECK: bert.rope_grad %{{.*}}, %{{.*}} {heads = 2 : i64, inv_freq = array<f32: 1.000000e+00, 1.000000e-01>}
  %dr = bert.rope_grad %dy, %pos {heads = 2 : i64, inv_freq = array<f32: 1.0, 0.1>} : (tensor<?x?x8xbf16>, tensor<?x?xi32>) -> tensor<?x?x8xbf16>
  return
}

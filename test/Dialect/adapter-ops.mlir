// RUN: bertc-opt %s | bertc-opt | FileCheck %s
// Round trip of a LoRA adapter's scaling.

// CHECK-LABEL: func.func @scaled
// CHECK: bert.scale %{{.*}} {factor = 2.000000e+00 : f32} : (tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
func.func @scaled(%x: tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16> {
  %y = bert.scale %x {factor = 2.0 : f32} : (tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
  return %y : tensor<?x?x8xbf16>
}

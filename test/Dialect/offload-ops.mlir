// RUN: bertc-opt %s | bertc-opt | FileCheck %s

// A checkpoint copied to host memory and back: the host copy is read by the reload alone.
// CHECK-LABEL: func.func @round_trip
// CHECK: %[[H:.*]] = bert.offload %{{.*}} : (tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
// CHECK: bert.reload %[[H]] : (tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
func.func @round_trip(%x: tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16> {
  %h = bert.offload %x : (tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
  %y = bert.reload %h : (tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
  return %y : tensor<?x?x64xbf16>
}

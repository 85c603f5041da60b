// RUN: bertc-opt %s | bertc-opt | FileCheck %s
// A linear with and without its optional bias (torch.nn.Linear(bias=False)) round-trips;
// the form with a bias prints as it always did.

// CHECK-LABEL: func.func @linear_forms
func.func @linear_forms(%x: tensor<?x?x8xbf16>, %w: tensor<4x8xbf16>, %b: tensor<4xbf16>) {
  // CHECK: bert.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>) -> tensor<?x?x4xbf16>
  %y = bert.linear %x, %w, %b : (tensor<?x?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>) -> tensor<?x?x4xbf16>
  // CHECK: bert.linear %{{[^,]*}}, %{{[^,]*}} : (tensor<?x?x8xbf16>, tensor<4x8xbf16>) -> tensor<?x?x4xbf16>
  %q = bert.linear %x, %w : (tensor<?x?x8xbf16>, tensor<4x8xbf16>) -> tensor<?x?x4xbf16>
  return
}

// CHECK-LABEL: func.func @linear_no_bias_tf32
func.func @linear_no_bias_tf32(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // CHECK: bert.linear %{{[^,]*}}, %{{[^,]*}} {tf32} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %y = bert.linear %x, %w {tf32} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda tf32=true" | FileCheck %s --check-prefix=TF32
// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda tf32=true" | bertc-opt -bertc-lower-to-target="target=cuda" | FileCheck %s --check-prefix=FP32
// RUN: not bertc-opt %s -bertc-lower-to-target="target=cpu tf32=true" 2>&1 | FileCheck %s --check-prefix=CPU

// With tf32 the cuda target's fp32 GEMMs, forward and both gradients, are marked.
// TF32-LABEL: func.func @fp32
// TF32: bert.linear %{{.*}} {tf32}
// TF32: bert.linear_grad_input %{{.*}} {tf32}
// TF32: bert.linear_grad_weight %{{.*}} {tf32}

// Lowering again without it removes the marks.
// FP32-LABEL: func.func @fp32
// FP32-NOT: tf32
// FP32-LABEL: func.func @bf16
func.func @fp32(%x: tensor<?x?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>, %dy: tensor<?x?x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x8xf32>, tensor<4x8xf32>) {
  %y = bert.linear %x, %w, %b : (tensor<?x?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %dx = bert.linear_grad_input %dy, %w : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
  %dw = bert.linear_grad_weight %dy, %x : (tensor<?x?x4xf32>, tensor<?x?x8xf32>) -> tensor<4x8xf32>
  return %y, %dx, %dw : tensor<?x?x4xf32>, tensor<?x?x8xf32>, tensor<4x8xf32>
}

// 16-bit GEMMs run on 16-bit tensor cores: tf32 leaves them alone.
// TF32-LABEL: func.func @bf16
// TF32-NOT: tf32
// TF32: return
func.func @bf16(%x: tensor<?x?x8xbf16>, %w: tensor<4x8xbf16>, %b: tensor<4xbf16>, %dy: tensor<?x?x4xbf16>) -> (tensor<?x?x4xbf16>, tensor<?x?x8xbf16>, tensor<4x8xf32>) {
  %y = bert.linear %x, %w, %b : (tensor<?x?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>) -> tensor<?x?x4xbf16>
  %dx = bert.linear_grad_input %dy, %w : (tensor<?x?x4xbf16>, tensor<4x8xbf16>) -> tensor<?x?x8xbf16>
  %dw = bert.linear_grad_weight %dy, %x : (tensor<?x?x4xbf16>, tensor<?x?x8xbf16>) -> tensor<4x8xf32>
  return %y, %dx, %dw : tensor<?x?x4xbf16>, tensor<?x?x8xbf16>, tensor<4x8xf32>
}

// CPU: error: -bertc-lower-to-target: tf32 needs target=cuda

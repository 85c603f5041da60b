// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda tf32=true" | FileCheck %s --check-prefix=TF32
// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda tf32=true attention-head-chunk=1" | FileCheck %s --check-prefix=CHUNKED
// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda tf32=true attention-head-chunk=1" | bertc-opt -bertc-lower-to-target="target=cuda attention-head-chunk=1" | FileCheck %s --check-prefix=FP32
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

// Attention: the fused kernels have no GEMMs, so tf32 marks it only when it runs on tensor
// cores (a head chunk), and only in fp32.
// TF32-LABEL: func.func @attention
// TF32-NOT: tf32
// TF32: return
// CHUNKED-LABEL: func.func @attention
// CHUNKED: bert.attention {{.*}}head_chunk = 1 : i64, {{.*}}tf32
// CHUNKED: bert.attention_grad {{.*}}head_chunk = 1 : i64, {{.*}}tf32
// CHUNKED-LABEL: func.func @attention_bf16
// CHUNKED-NOT: tf32
// CHUNKED: return
// FP32-LABEL: func.func @attention
// FP32-NOT: tf32
// FP32: return
func.func @attention(%q: tensor<?x?x8xf32>, %mask: tensor<?x?xi32>, %dy: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %a, %lse = bert.attention %q, %q, %q, %mask {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  %dq, %dk, %dv = bert.attention_grad %dy, %q, %q, %q, %mask, %a, %lse {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x2x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return %dq : tensor<?x?x8xf32>
}

func.func @attention_bf16(%q: tensor<?x?x8xbf16>, %mask: tensor<?x?xi32>, %dy: tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16> {
  %a, %lse = bert.attention %q, %q, %q, %mask {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?xi32>) -> (tensor<?x?x8xbf16>, tensor<?x2x?xf32>)
  %dq, %dk, %dv = bert.attention_grad %dy, %q, %q, %q, %mask, %a, %lse {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?xi32>, tensor<?x?x8xbf16>, tensor<?x2x?xf32>) -> (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16>)
  return %dq : tensor<?x?x8xbf16>
}

// CPU: error: -bertc-lower-to-target: tf32 needs target=cuda

// RUN: bertc-opt %s -bertc-autodiff | FileCheck %s --enable-var-scope

// A LoRA adapter on a frozen linear layer: y = W x + scale(B (A x), 2). The scaling's gradient
// is the result gradient scaled by the same factor; A and B get weight gradients, the
// frozen W none; x's gradient sums the frozen layer's and the adapter's.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[W:.*]] = bert.param "layer.weight"
// CHECK: %[[A:.*]] = bert.param "layer.lora_A.weight"
// CHECK: %[[B:.*]] = bert.param "layer.lora_B.weight"
// CHECK: %[[BASE:.*]] = bert.linear %[[X:.*]], %[[W]]
// CHECK: %[[DOWN:.*]] = bert.linear %[[X]], %[[A]]
// CHECK: %[[UP:.*]] = bert.linear %[[DOWN]], %[[B]]
// CHECK: bert.scale %[[UP]] {factor = 2.000000e+00 : f32}
// CHECK: %[[DY:.*]] = bert.cross_entropy_grad
// CHECK: %[[DUP:.*]] = bert.scale %[[DY]] {factor = 2.000000e+00 : f32}
// CHECK-DAG: %[[DB:.*]] = bert.linear_grad_weight %[[DUP]], %[[DOWN]]
// CHECK-DAG: %[[DDOWN:.*]] = bert.linear_grad_input %[[DUP]], %[[B]]
// CHECK-DAG: bert.accumulate_grad %[[B]], %[[DB]]
// CHECK-DAG: %[[DA:.*]] = bert.linear_grad_weight %[[DDOWN]], %[[X]]
// CHECK-DAG: bert.accumulate_grad %[[A]], %[[DA]]
// CHECK-NOT: bert.linear_grad_weight %[[DY]], %[[X]]
// CHECK-NOT: bert.accumulate_grad %[[W]]
module {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %x = bert.select_token %e {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "layer.weight" {group = "encoder.layer.0", trainable = false, decay = true, init = "normal"} : tensor<4x8xf32>
    %a = bert.param "layer.lora_A.weight" {group = "encoder.layer.0", trainable = true, decay = true, init = "kaiming_uniform"} : tensor<2x8xf32>
    %b = bert.param "layer.lora_B.weight" {group = "encoder.layer.0", trainable = true, decay = true, init = "zeros"} : tensor<4x2xf32>
    %base = bert.linear %x, %w : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    %down = bert.linear %x, %a : (tensor<?x8xf32>, tensor<2x8xf32>) -> tensor<?x2xf32>
    %up = bert.linear %down, %b : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
    %scaled = bert.scale %up {factor = 2.0 : f32} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %y = bert.add %base, %scaled : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %loss = bert.cross_entropy %y, %labels : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

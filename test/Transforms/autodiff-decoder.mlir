// RUN: bertc-opt %s -bertc-autodiff | FileCheck %s --enable-var-scope

// A decoder block's ops: x -> rms_norm -> (silu(gate) * up) -> rope -> cross_entropy.
// Each forward op gets its gradient op, reading what its rule says: rms_norm_grad the
// forward's input and weight (no saved statistics), silu_grad silu's input, the product's
// two gradients are bert.mul of the result gradient and the other factor, rope_grad the
// positions and the forward's frequencies. The positions and the frozen input get none.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[POS:.*]] = bert.input "position_ids"
// CHECK: %[[X:.*]] = bert.embedding
// CHECK: %[[W:.*]] = bert.param "norm.weight"
// CHECK: %[[N:.*]] = bert.rms_norm %[[X]], %[[W]] {epsilon = 9.99999974E-6 : f32}
// CHECK: %[[GATE:.*]] = bert.linear %[[N]]
// CHECK: %[[UP:.*]] = bert.linear %[[N]]
// CHECK: %[[S:.*]] = bert.silu %[[GATE]]
// CHECK: %[[H:.*]] = bert.mul %[[S]], %[[UP]]
// CHECK: %[[R:.*]] = bert.rope %[[H]], %[[POS]] {heads = 2 : i64, inv_freq = array<f32: 1.000000e+00, 1.000000e-01>}
// CHECK: %[[DLOGITS:.*]] = bert.cross_entropy_grad
// CHECK: %[[DR:.*]] = bert.rope_grad %{{.*}}, %[[POS]] {heads = 2 : i64, inv_freq = array<f32: 1.000000e+00, 1.000000e-01>}
// CHECK-DAG: %[[DS:.*]] = bert.mul %[[DR]], %[[UP]]
// CHECK-DAG: %[[DUP:.*]] = bert.mul %[[DR]], %[[S]]
// CHECK: %[[DGATE:.*]] = bert.silu_grad %[[DS]], %[[GATE]]
// CHECK: %[[DX:.*]], %[[DW:.*]] = bert.rms_norm_grad %{{.*}}, %[[X]], %[[W]] {epsilon = 9.99999974E-6 : f32} : {{.*}} -> (tensor<?x?x8xf32>, tensor<8xf32>)
// CHECK: bert.accumulate_grad %[[W]], %[[DW]]
module {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %pos = bert.input "position_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?x?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x8xf32>
    %x = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %w = bert.param "norm.weight" {group = "layer", trainable = true, decay = false, init = "ones"} : tensor<8xf32>
    %n = bert.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %wg = bert.param "gate.weight" {group = "layer", trainable = true, decay = true, init = "normal"} : tensor<8x8xf32>
    %wu = bert.param "up.weight" {group = "layer", trainable = true, decay = true, init = "normal"} : tensor<8x8xf32>
    %b = bert.param "b" {group = "layer", trainable = false, decay = false, init = "zeros"} : tensor<8xf32>
    %gate = bert.linear %n, %wg, %b : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %up = bert.linear %n, %wu, %b : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %s = bert.silu %gate : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %h = bert.mul %s, %up : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %r = bert.rope %h, %pos {heads = 2 : i64, inv_freq = array<f32: 1.0, 0.1>} : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
    %loss = bert.cross_entropy %r, %labels : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

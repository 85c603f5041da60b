// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-fuse-add-layernorm | FileCheck %s
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-fuse-add-layernorm -bertc-plan-buffers -bertc-verify-budget | FileCheck %s --check-prefix=PLAN

// The residual add and the LayerNorm right after it become one op writing both the sum
// (which the backward normalises again) and the output. The add whose sum is not
// normalised next stays an add.
// CHECK-LABEL: func.func @micro_step
// CHECK-DAG: %[[G:.*]] = bert.param "g"
// CHECK-DAG: %[[B:.*]] = bert.param "b"
// CHECK: %[[E:.*]] = bert.embedding
// CHECK: %[[H:.*]] = bert.add %[[E]], %[[E]]
// CHECK: %[[S:.*]], %[[Y:.*]] = bert.add_layernorm %[[H]], %[[E]], %[[G]], %[[B]] {epsilon = {{.*}}} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>)
// CHECK-NOT: bert.layernorm %
// CHECK: bert.select_token %[[Y]]
// CHECK: bert.layernorm_grad %{{.*}}, %[[S]], %[[G]]

// Planned: the sum takes over the bytes of the addend that dies there (%h), the output
// gets its own, and the op its LayerNorm statistics' workspace.
// PLAN: %[[H:.*]] = bert.add {{.*}}bert.offsets = array<i64: [[HOFF:[0-9]+]]>
// PLAN: bert.add_layernorm %[[H]], {{.*}}bert.offsets = array<i64: [[HOFF]], {{[0-9]+}}>, bert.workspace = {{[0-9]+}} : i64

module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %h = bert.add %e, %e : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
    %s = bert.add %h, %e : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
    %g = bert.param "g" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<16xf32>
    %b = bert.param "b" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %n = bert.layernorm %s, %g, %b {epsilon = 9.99999996E-13 : f32} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %cls = bert.select_token %n {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %c = bert.param "c" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %cls, %w, %c : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

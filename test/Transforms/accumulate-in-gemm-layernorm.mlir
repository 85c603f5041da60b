// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-accumulate-in-gemm | FileCheck %s
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-accumulate-in-gemm -bertc-plan-buffers -bertc-verify-budget | FileCheck %s --check-prefix=PLAN

// A LayerNorm whose gamma and beta train: its backward and their two accumulations become
// one op at the backward's place, adding both column sums into the slots. One whose
// parameters are frozen has gradients nobody accumulates, and keeps its backward.
// CHECK-LABEL: func.func @micro_step
// CHECK-DAG: %[[G:.*]] = bert.param "g"
// CHECK-DAG: %[[B:.*]] = bert.param "b"
// CHECK-DAG: %[[E:.*]] = bert.embedding
// CHECK: %[[DN:.*]] = bert.layernorm_grad
// CHECK-NOT: bert.layernorm_grad
// CHECK: %[[DE:.*]] = bert.accumulate_layernorm_grad %[[G]], %[[B]], %{{.*}}, %[[E]] {epsilon = {{.*}}} : tensor<16xf32>, tensor<16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x16xf32>
// CHECK-NOT: bert.accumulate_grad %[[G]]
// CHECK-NOT: bert.accumulate_grad %[[B]]
// CHECK: bert.accumulate_embedding_grad %{{.*}}, %[[DE]], %{{.*}}

// Planned: the fused op gets the LayerNorm backward's kernel workspace; g and b keep their
// gradient slots.
// PLAN: bert.param "g" {bert.slots = #bert.param_slots<{{.*}}grad = {{[0-9]+}}{{.*}}adam_m = {{[0-9]+}}{{.*}}adam_v = {{[0-9]+}}{{.*}}>
// PLAN: bert.param "b" {bert.slots = #bert.param_slots<{{.*}}grad = {{[0-9]+}}{{.*}}adam_m = {{[0-9]+}}{{.*}}adam_v = {{[0-9]+}}{{.*}}>
// PLAN: bert.accumulate_layernorm_grad {{.*}}bert.workspace = {{[0-9]+}} : i64

module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %g = bert.param "g" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<16xf32>
    %b = bert.param "b" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %n = bert.layernorm %e, %g, %b {epsilon = 9.99999996E-13 : f32} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %fg = bert.param "fg" {group = "encoder", trainable = false, decay = false, init = "ones"} : tensor<16xf32>
    %fb = bert.param "fb" {group = "encoder", trainable = false, decay = false, init = "zeros"} : tensor<16xf32>
    %m = bert.layernorm %n, %fg, %fb {epsilon = 9.99999996E-13 : f32} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %cls = bert.select_token %m {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %c = bert.param "c" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %cls, %w, %c : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

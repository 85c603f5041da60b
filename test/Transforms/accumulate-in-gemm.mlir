// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-accumulate-in-gemm | FileCheck %s --implicit-check-not=linear_grad_weight --implicit-check-not=bias_grad --implicit-check-not=accumulate_grad --implicit-check-not=bert.embedding_grad
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-accumulate-in-gemm -bertc-plan-buffers -bertc-verify-budget | FileCheck %s --check-prefix=PLAN

// Batch 8 at micro-batch 4: the gradients accumulate over two micro-steps. Each linear
// weight's gradient GEMM and its accumulation become one GEMM into the gradient slot, at the
// GEMM's place, each bias's column sum and its accumulation one sum into its slot, and the
// embedding table's scatter-add and its accumulation one scatter-add into its slot, which
// keeps the table's padding row.
// CHECK-LABEL: func.func @micro_step
// CHECK-DAG: %[[T:.*]] = bert.param "t"
// CHECK-DAG: %[[W:.*]] = bert.param "w"
// CHECK-DAG: %[[B:.*]] = bert.param "b"
// CHECK-DAG: %[[V:.*]] = bert.param "v"
// CHECK-DAG: %[[C:.*]] = bert.param "c"
// CHECK-DAG: %[[X:.*]] = bert.select_token
// CHECK-DAG: %[[H:.*]] = bert.linear %[[X]], %[[W]]
// CHECK-DAG: %[[DLOGITS:.*]] = bert.cross_entropy_grad
// CHECK: bert.accumulate_linear_grad_weight %[[V]], %[[DLOGITS]], %[[H]] : tensor<8x16xf32>, tensor<?x8xf32>, tensor<?x16xf32>
// CHECK: bert.accumulate_bias_grad %[[C]], %[[DLOGITS]] : tensor<8xf32>, tensor<?x8xf32>
// CHECK: %[[DH:.*]] = bert.linear_grad_input %[[DLOGITS]], %[[V]]
// CHECK: bert.accumulate_linear_grad_weight %[[W]], %[[DH]], %[[X]] : tensor<16x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
// CHECK: bert.accumulate_bias_grad %[[B]], %[[DH]] : tensor<16xf32>, tensor<?x16xf32>
// CHECK: bert.accumulate_embedding_grad %[[T]], %{{.*}}, %{{.*}} {padding_idx = 3 : i64} : tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?xi32>

// Planned and checked: the GEMMs write the weights' gradient slots, which the planner keeps.
// PLAN: bert.param "w" {bert.slots = #bert.param_slots<{{.*}}grad = {{[0-9]+}}{{.*}}adam_m = {{[0-9]+}}{{.*}}adam_v = {{[0-9]+}}{{.*}}>
// PLAN: bert.accumulate_linear_grad_weight %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : tensor<16x16xf32>
// PLAN: bert.accumulate_bias_grad %{{[0-9]+}}, %{{[0-9]+}} : tensor<16xf32>
// PLAN: bert.accumulate_embedding_grad %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {padding_idx = 3 : i64} : tensor<64x16xf32>

module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 8, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t {padding_idx = 3 : i64} : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %cls = bert.select_token %e {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<16x16xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %h = bert.linear %cls, %w, %b : (tensor<?x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %v = bert.param "v" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %c = bert.param "c" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %h, %v, %c : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-accumulate-in-gemm | FileCheck %s --implicit-check-not=bias_grad --implicit-check-not=gelu_grad --implicit-check-not=dropout_grad
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-accumulate-in-gemm -bertc-plan-buffers -bertc-verify-budget | FileCheck %s --check-prefix=PLAN
// RUN: sed 's/bert.gelu %h1 :/bert.gelu %h1 {approximate = #bert.gelu_approximation<tanh>} :/' %s | bertc-opt -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-accumulate-in-gemm | FileCheck %s --check-prefix=TANH --implicit-check-not=gelu_grad

// linear -> GELU -> linear -> dropout -> classifier. The bias gradients of the two linear
// layers sum what the dropout's and the GELU's backwards write: each backward and the
// bias's accumulation become one op at the backward's place, whose result the GEMMs read.
// The classifier's bias sums the loss gradient, which no such backward writes.
// CHECK-LABEL: func.func @micro_step
// CHECK-DAG: %[[B1:.*]] = bert.param "b1"
// CHECK-DAG: %[[B2:.*]] = bert.param "b2"
// CHECK-DAG: %[[C:.*]] = bert.param "c"
// CHECK-DAG: %[[H1:.*]] = bert.linear %{{.*}}, %{{.*}}, %[[B1]]
// CHECK: %[[DLOGITS:.*]] = bert.cross_entropy_grad
// CHECK: bert.accumulate_bias_grad %[[C]], %[[DLOGITS]] : tensor<8xf32>, tensor<?x8xf32>
// CHECK: %[[DDROP:.*]] = bert.linear_grad_input %[[DLOGITS]]
// CHECK: %[[DH2:.*]] = bert.dropout_grad_accumulate_bias %[[B2]], %[[DDROP]] {rate = 1.000000e-01 : f32, stream = 0 : i32} : tensor<16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK: %[[DG:.*]] = bert.linear_grad_input %[[DH2]]
// CHECK: %[[DH1:.*]] = bert.gelu_grad_accumulate_bias %[[B1]], %[[DG]], %[[H1]] : tensor<32xf32>, tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x32xf32>
// CHECK: bert.accumulate_linear_grad_weight %{{.*}}, %[[DH1]]

// Planned: the fused ops write the bias slots, which the planner keeps.
// PLAN: bert.param "b2" {bert.slots = #bert.param_slots<{{.*}}grad = {{[0-9]+}}{{.*}}adam_m = {{[0-9]+}}{{.*}}adam_v = {{[0-9]+}}{{.*}}>
// PLAN: bert.dropout_grad_accumulate_bias
// PLAN: bert.gelu_grad_accumulate_bias

// With GELU's tanh approximation, the fused op computes the same GELU's derivative.
// TANH: bert.gelu %{{.*}} {approximate = #bert.gelu_approximation<tanh>}
// TANH: bert.gelu_grad_accumulate_bias %{{.*}}, %{{.*}}, %{{.*}} {approximate = #bert.gelu_approximation<tanh>} : tensor<32xf32>, tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x32xf32>

module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 8, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %cls = bert.select_token %e {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %w1 = bert.param "w1" {group = "head", trainable = true, decay = true, init = "normal"} : tensor<32x16xf32>
    %b1 = bert.param "b1" {group = "head", trainable = true, decay = false, init = "zeros"} : tensor<32xf32>
    %h1 = bert.linear %cls, %w1, %b1 : (tensor<?x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<?x32xf32>
    %g = bert.gelu %h1 : (tensor<?x32xf32>) -> tensor<?x32xf32>
    %w2 = bert.param "w2" {group = "head", trainable = true, decay = true, init = "normal"} : tensor<16x32xf32>
    %b2 = bert.param "b2" {group = "head", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %h2 = bert.linear %g, %w2, %b2 : (tensor<?x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %d = bert.dropout %h2 {rate = 0.1 : f32, stream = 0 : i32} : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %v = bert.param "v" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %c = bert.param "c" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %d, %v, %c : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

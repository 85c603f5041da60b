// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-accumulate-in-gemm | FileCheck %s
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-accumulate-in-gemm -bertc-plan-buffers -bertc-verify-budget | FileCheck %s --check-prefix=PLAN

// The embeddings feed two projections and a residual, so their gradient is a sum of three:
// the residual's (the select_token gradient d) and the two projections' d W1 and d W2.
// A sum whose GEMM term has no other reader, and whose other term exists before the GEMM,
// becomes one linear_grad_input_add (the GEMM with beta = 1 over that term) at the GEMM's
// place; one whose other term is the GEMM's own input stays an add, since the result may
// take over the addend's bytes while the GEMM still reads them.
// CHECK-LABEL: func.func @micro_step
// CHECK-DAG: %[[W1:.*]] = bert.param "w1"
// CHECK-DAG: %[[W2:.*]] = bert.param "w2"
// CHECK: %[[D:.*]] = bert.select_token_grad
// CHECK: %[[G2:.*]] = bert.linear_grad_input %[[D]], %[[W2]]
// CHECK-NEXT: %[[S:.*]] = bert.add %[[D]], %[[G2]]
// CHECK-NEXT: %[[DE:.*]] = bert.linear_grad_input_add %[[D]], %[[W1]], %[[S]] : (tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
// CHECK-NOT: bert.add
// CHECK: bert.accumulate_embedding_grad %{{.*}}, %[[DE]], %{{.*}}

// Planned: the fused GEMM writes its result over its addend, which dies there.
// PLAN: bert.select_token_grad
// PLAN: bert.add %{{[0-9]+}}, %{{[0-9]+}} {bert.offsets = array<i64: [[SUM:[0-9]+]]>}
// PLAN-NEXT: bert.linear_grad_input_add %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {bert.offsets = array<i64: [[SUM]]>}

module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %w1 = bert.param "w1" {group = "layers", trainable = true, decay = true, init = "normal"} : tensor<16x16xf32>
    %b1 = bert.param "b1" {group = "layers", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %h1 = bert.linear %e, %w1, %b1 : (tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %w2 = bert.param "w2" {group = "layers", trainable = true, decay = true, init = "normal"} : tensor<16x16xf32>
    %b2 = bert.param "b2" {group = "layers", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %h2 = bert.linear %e, %w2, %b2 : (tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %s = bert.add %h1, %h2 : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
    %r = bert.add %s, %e : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
    %cls = bert.select_token %r {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %v = bert.param "v" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %c = bert.param "c" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %cls, %v, %c : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

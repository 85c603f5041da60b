// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-fuse-add-layernorm | FileCheck %s
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-schedule-for-memory -bertc-fuse-add-layernorm -bertc-plan-buffers -bertc-derive-eval-step | FileCheck %s --check-prefix=EVAL

// The dropout right before a residual add, read by nothing else, is folded into the
// add_layernorm as its lhs's dropout (whichever addend it was); its backward still
// regenerates the mask from the same stream. A dropout whose result something else reads
// too stays.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[E:.*]] = bert.embedding
// CHECK: %[[X:.*]] = bert.linear %[[E]]
// CHECK-NOT: bert.dropout %[[X]]
// CHECK: %[[S:.*]], %[[Y:.*]] = bert.add_layernorm %[[X]], %[[E]], %{{.*}}, %{{.*}} {dropout = 1.000000e-01 : f32, epsilon = {{.*}}, stream = 3 : i32}
// CHECK: %[[Z:.*]] = bert.linear %[[Y]]
// CHECK: %[[KEPT:.*]] = bert.dropout %[[Z]] {rate = 2.000000e-01 : f32, stream = 4 : i32}
// CHECK: bert.add_layernorm %[[KEPT]], %[[KEPT]], %{{.*}}, %{{.*}} {epsilon = {{[^,]*}}}
// CHECK-NOT: bert.dropout %
// CHECK: bert.dropout_grad %{{.*}} {rate = 2.000000e-01 : f32, stream = 4 : i32}
// CHECK: bert.dropout_grad %{{.*}} {rate = 1.000000e-01 : f32, stream = 3 : i32}

// The evaluation step keeps the fused op without its dropout (a rate of 0, the default, is
// not printed).
// EVAL-LABEL: func.func @eval_step
// EVAL: bert.add_layernorm {{.*}} {bert.offsets = {{.*}}, epsilon = {{[^,]*}}, stream = 3 : i32}
// EVAL: bert.dropout {{.*}}rate = 0.000000e+00 : f32

module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %w1 = bert.param "w1" {group = "encoder", trainable = true, decay = true, init = "normal"} : tensor<16x16xf32>
    %b1 = bert.param "b1" {group = "encoder", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %x = bert.linear %e, %w1, %b1 : (tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %d = bert.dropout %x {rate = 0.1 : f32, stream = 3 : i32} : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
    %s = bert.add %e, %d : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
    %g = bert.param "g" {group = "encoder", trainable = true, decay = false, init = "ones"} : tensor<16xf32>
    %b = bert.param "b" {group = "encoder", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %n = bert.layernorm %s, %g, %b {epsilon = 9.99999996E-13 : f32} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %w2 = bert.param "w2" {group = "encoder", trainable = true, decay = true, init = "normal"} : tensor<16x16xf32>
    %b2 = bert.param "b2" {group = "encoder", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %z = bert.linear %n, %w2, %b2 : (tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %k = bert.dropout %z {rate = 0.2 : f32, stream = 4 : i32} : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
    %s2 = bert.add %k, %k : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
    %g2 = bert.param "g2" {group = "encoder", trainable = true, decay = false, init = "ones"} : tensor<16xf32>
    %c2 = bert.param "c2" {group = "encoder", trainable = true, decay = false, init = "zeros"} : tensor<16xf32>
    %n2 = bert.layernorm %s2, %g2, %c2 {epsilon = 9.99999996E-13 : f32} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %cls = bert.select_token %n2 {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %c = bert.param "c" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %cls, %w, %c : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

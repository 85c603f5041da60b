// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64" -bertc-derive-eval-step | FileCheck %s
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64" -bertc-derive-eval-step -bertc-derive-eval-step | FileCheck %s --check-prefix=AGAIN
// RUN: not bertc-opt %s -bertc-derive-eval-step 2>&1 | FileCheck %s --check-prefix=UNPLANNED

// The forward ops the loss depends on, in the training step's order, at its offsets: the
// offsets captured in @micro_step must reappear unchanged in @eval_step.
// CHECK-LABEL: func.func @micro_step() -> tensor<f32>
// CHECK: bert.embedding {{.*}}bert.offsets = array<i64: [[$EMB:[0-9]+]]>
// CHECK: bert.dropout {{.*}}bert.offsets = array<i64: [[$DROP:[0-9]+]]>, rate = 1.000000e-01 : f32, stream = 0 : i32
// CHECK: bert.attention {{.*}}bert.offsets = array<i64: [[$ATT:[0-9]+]], [[$LSE:[0-9]+]]>, dropout = 1.000000e-01 : f32
// CHECK: bert.linear {{.*}}bert.offsets = array<i64: [[$LOGITS:[0-9]+]]>
// CHECK: bert.cross_entropy {{.*}}bert.offsets = array<i64: [[$LOSS:[0-9]+]]>
// CHECK: bert.attention_grad
// CHECK-LABEL: func.func @optimizer_step()

// Dropout off (the dropout op's rate and the attention's), and no backward: the loss
// and the logits are returned.
// CHECK-LABEL: func.func @eval_step() -> (tensor<f32>, tensor<?x2xf32>)
// CHECK-NEXT: %[[IDS:.*]] = bert.input "input_ids"
// CHECK-NEXT: %[[MASK:.*]] = bert.input "attention_mask"
// CHECK-NEXT: %[[LABELS:.*]] = bert.input "labels"
// CHECK-NEXT: %[[T:.*]] = bert.param "t"
// CHECK-NEXT: %[[E:.*]] = bert.embedding %[[IDS]], %[[T]] {bert.offsets = array<i64: [[$EMB]]>}
// CHECK-NEXT: %[[D:.*]] = bert.dropout %[[E]] {bert.offsets = array<i64: [[$DROP]]>, rate = 0.000000e+00 : f32, stream = 0 : i32}
// CHECK-NEXT: %[[A:[^,]*]], %{{[^ ]*}} = bert.attention %[[D]], %[[D]], %[[D]], %[[MASK]] {bert.offsets = array<i64: [[$ATT]], [[$LSE]]>, dropout = 0.000000e+00 : f32, heads = 2 : i64, stream = 1 : i32}
// CHECK-NEXT: %[[CLS:.*]] = bert.select_token %[[A]] 
// CHECK-NEXT: %[[W:.*]] = bert.param "w"
// CHECK-NEXT: %[[B:.*]] = bert.param "b"
// CHECK-NEXT: %[[Y:.*]] = bert.linear %[[CLS]], %[[W]], %[[B]] {bert.offsets = array<i64: [[$LOGITS]]>}
// CHECK-NEXT: %[[L:.*]] = bert.cross_entropy %[[Y]], %[[LABELS]] {bert.offsets = array<i64: [[$LOSS]]>}
// CHECK-NEXT: return %[[L]], %[[Y]] : tensor<f32>, tensor<?x2xf32>
// CHECK-NEXT: }

// Run again, the pass replaces the eval step it made rather than adding a second one.
// AGAIN-COUNT-1: func.func @eval_step()
// AGAIN-NOT: func.func @eval_step()

// Before planning there are no offsets for the eval step to share.
// UNPLANNED: error: the module has no memory plan for @eval_step to share: run -bertc-plan-buffers first
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4 : i64, bert.train = #bert.train<batch = 2, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %mask = bert.input "attention_mask" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %d = bert.dropout %e {rate = 0.1 : f32, stream = 0 : i32} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %a, %lse = bert.attention %d, %d, %d, %mask {heads = 2 : i64, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
    %cls = bert.select_token %a {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64" -bertc-derive-eval-step -bertc-instrument-plan-checks > %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: bertc-opt %t.mlir -bertc-instrument-plan-checks | diff %t.mlir -
// RUN: not bertc-opt %s -bertc-instrument-plan-checks 2>&1 | FileCheck %s --check-prefix=UNPLANNED

// Each op's planned operands are read-checked before it, its results defined after it,
// then the tensors it used last released.
// CHECK-LABEL: func.func @micro_step()
// CHECK: %[[IDS:.*]] = bert.input "input_ids"
// CHECK-NOT: bert.plan_check
// CHECK: %[[E:.*]] = bert.embedding %[[IDS]], %{{.*}} {bert.offsets = array<i64: [[IN_PLACE:[0-9]+]]>}
// CHECK-NEXT: bert.plan_check_define %[[E]] : tensor<?x?x8xf32>
// CHECK-NEXT: bert.plan_check_read %[[E]] for "bert.dropout" : tensor<?x?x8xf32>
// CHECK-NEXT: %[[D:.*]] = bert.dropout %[[E]] {bert.offsets = array<i64: [[IN_PLACE]]>
// The dropout ran in place (both at one offset): the embedding's bytes are the dropout's
// now, so they are not released.
// CHECK-NEXT: bert.plan_check_define %[[D]]
// CHECK-NEXT: bert.plan_check_read %[[D]] for "bert.gelu"
// A result nothing reads dies where it is made.
// CHECK-NEXT: %[[G:.*]] = bert.gelu %[[D]]
// CHECK-NEXT: bert.plan_check_define %[[G]]
// CHECK-NEXT: bert.plan_check_release %[[G]]
// CHECK-NEXT: bert.plan_check_read %[[D]] for "bert.select_token"
// CHECK-NEXT: %[[CLS:.*]] = bert.select_token %[[D]]
// CHECK-NEXT: bert.plan_check_define %[[CLS]]
// CHECK-NEXT: bert.plan_check_release %[[D]]
// CHECK-NEXT: bert.param "w"
// CHECK-NEXT: bert.param "b"
// CHECK-NEXT: bert.plan_check_read %[[CLS]] for "bert.linear"
// CHECK-NEXT: %[[Y:.*]] = bert.linear %[[CLS]]
// CHECK-NEXT: bert.plan_check_define %[[Y]]
// CHECK-NEXT: bert.plan_check_read %[[Y]] for "bert.cross_entropy"
// CHECK-NEXT: %[[L:.*]] = bert.cross_entropy %[[Y]]
// CHECK-NEXT: bert.plan_check_define %[[L]]
// The step returns the loss: it is never released.
// CHECK-NOT: bert.plan_check_release %[[L]]
// An op reading two tensors last releases both, in operand order.
// CHECK: %[[DY:.*]] = bert.cross_entropy_grad %[[SEED:.*]], %[[Y]]
// CHECK-NEXT: bert.plan_check_define %[[DY]]
// CHECK-NEXT: bert.plan_check_release %[[SEED]]
// CHECK-NEXT: bert.plan_check_release %[[Y]]
// Parameters are not in the activation space: accumulate_grad reads only the gradient.
// CHECK: bert.plan_check_read %[[DT:.*]] for "bert.accumulate_grad" : tensor<16x8xf32>
// CHECK-NEXT: bert.accumulate_grad %{{.*}}, %[[DT]]
// CHECK-NEXT: bert.plan_check_release %[[DT]]
// CHECK-NOT: bert.plan_check_release %[[L]]
// CHECK: return %[[L]]

// The optimizer step's updates read parameter slots only: nothing to check.
// CHECK-LABEL: func.func @optimizer_step()
// CHECK-NOT: bert.plan_check
// CHECK: return

// The eval step returns the loss and the logits, which the trainer then copies out: a
// read of them by "evalStep" last, and neither is released.
// CHECK-LABEL: func.func @eval_step()
// CHECK: %[[EY:.*]] = bert.linear
// CHECK: %[[EL:.*]] = bert.cross_entropy %[[EY]]
// CHECK-NEXT: bert.plan_check_define %[[EL]]
// CHECK-NEXT: bert.plan_check_read %[[EY]] for "evalStep"
// CHECK-NEXT: return %[[EL]], %[[EY]]

// The checks compare with the plan's offsets: without a plan there is nothing to check.
// UNPLANNED: error: the module has no memory plan to check: run -bertc-plan-buffers first
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4 : i64, bert.train = #bert.train<batch = 2, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %d = bert.dropout %e {rate = 0.1 : f32, stream = 0 : i32} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %unused = bert.gelu %d : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %cls = bert.select_token %d {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

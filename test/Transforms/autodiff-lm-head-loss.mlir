// RUN: bertc-opt %s -split-input-file -bertc-autodiff | FileCheck %s --enable-var-scope
// RUN: bertc-opt %s -split-input-file -bertc-autodiff -bertc-accumulate-in-gemm | FileCheck %s --check-prefix=GEMM --enable-var-scope
// RUN: bertc-opt %s -split-input-file -bertc-autodiff -bertc-mixed-precision=precision=bf16 | FileCheck %s --check-prefix=BF16 --enable-var-scope

// A tied LM head: the embedding table is the loss's weight. The loss's one gradient op
// gives d hidden and d weight from the same recomputed logits (the labels get none), and
// the table's two gradients are summed for its slot.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[T:.*]] = bert.param "embed_tokens.weight"
// CHECK: %[[X:.*]] = bert.embedding
// CHECK: %[[LOSS:.*]] = bert.lm_head_loss %[[H:[^,]*]], %[[T]], %[[LABELS:[^ ]*]] {token_chunk = 4 : i64}
// CHECK: %[[SEED:.*]] = bert.fill
// CHECK: %[[DH:.*]], %[[DW:.*]] = bert.lm_head_loss_grad %[[SEED]], %[[H]], %[[T]], %[[LABELS]] {token_chunk = 4 : i64} : {{.*}} -> (tensor<?x?x8xf32>, tensor<16x8xf32>)
// CHECK: %[[DE:.*]] = bert.embedding_grad
// CHECK: %[[SUM:.*]] = bert.add %[[DW]], %[[DE]]
// CHECK: bert.accumulate_grad %[[T]], %[[SUM]]

// Accumulated in their slot: the sum is split, each gradient then adds into the table's slot
// where it is made, d weight by the loss's GEMMs (beta = 1) and the embedding's rows by its
// scatter-add; no [vocab, hidden] gradient tensor is left.
// GEMM-LABEL: func.func @micro_step
// GEMM: %[[T:.*]] = bert.param "embed_tokens.weight"
// GEMM: %[[DH:.*]] = bert.accumulate_lm_head_loss_grad %[[T]], %{{.*}}, %{{.*}}, %{{.*}} {token_chunk = 4 : i64}
// GEMM: bert.accumulate_embedding_grad %[[T]]
// GEMM-NOT: bert.add
// GEMM-NOT: bert.lm_head_loss_grad
// GEMM: return

// In bf16 the GEMM operands are stored in bf16; the loss, its seed and the weight gradient
// stay fp32.
// BF16-LABEL: func.func @micro_step
// BF16: bert.lm_head_loss {{.*}} : (tensor<?x?x8xbf16>, tensor<16x8xbf16>, tensor<?x?xi32>) -> tensor<f32>
// BF16: bert.lm_head_loss_grad {{.*}} : (tensor<f32>, tensor<?x?x8xbf16>, tensor<16x8xbf16>, tensor<?x?xi32>) -> (tensor<?x?x8xbf16>, tensor<16x8xf32>)
module {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?x?xi32>
    %t = bert.param "embed_tokens.weight" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
    %x = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %w = bert.param "norm.weight" {group = "layer", trainable = true, decay = false, init = "ones"} : tensor<8xf32>
    %h = bert.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %loss = bert.lm_head_loss %h, %t, %labels {token_chunk = 4 : i64} : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<?x?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A frozen LM head (as under LoRA): the gradient op gives d hidden alone, no [vocab,
// hidden] weight gradient.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[HEAD:.*]] = bert.param "lm_head.weight"
// CHECK: bert.lm_head_loss_grad {{.*}} -> tensor<?x?x8xf32>
// CHECK-NOT: bert.accumulate_grad %[[HEAD]]
// CHECK: return
module {
  func.func @micro_step() -> tensor<f32> {
    %labels = bert.input "labels" : tensor<?x?xi32>
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %t = bert.param "embed_tokens.weight" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
    %x = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %head = bert.param "lm_head.weight" {group = "head", trainable = false, decay = true, init = "normal"} : tensor<32x8xf32>
    %loss = bert.lm_head_loss %x, %head, %labels : (tensor<?x?x8xf32>, tensor<32x8xf32>, tensor<?x?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

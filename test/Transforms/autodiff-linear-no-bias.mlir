// RUN: bertc-opt %s -bertc-autodiff | FileCheck %s --enable-var-scope
// RUN: bertc-opt %s -bertc-autodiff -bertc-accumulate-in-gemm | FileCheck %s --check-prefix=GEMM

// Two bias-less projections (a decoder's q_proj, then an LM head): each gets the input
// and weight GEMMs of its gradient rule and no column sum, since there is no bias.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[WQ:.*]] = bert.param "q_proj.weight"
// CHECK: %[[Q:.*]] = bert.linear %[[X:[^,]*]], %[[WQ]] :
// CHECK: %[[WH:.*]] = bert.param "lm_head.weight"
// CHECK: %[[LOGITS:.*]] = bert.linear %[[Q]], %[[WH]] :
// CHECK: %[[DLOGITS:.*]] = bert.cross_entropy_grad
// CHECK-DAG: %[[DQ:.*]] = bert.linear_grad_input %[[DLOGITS]], %[[WH]]
// CHECK-DAG: %[[DWH:.*]] = bert.linear_grad_weight %[[DLOGITS]], %[[Q]]
// CHECK-DAG: bert.accumulate_grad %[[WH]], %[[DWH]]
// CHECK-DAG: %[[DWQ:.*]] = bert.linear_grad_weight %[[DQ]], %[[X]]
// CHECK-DAG: bert.accumulate_grad %[[WQ]], %[[DWQ]]
// CHECK-NOT: bert.bias_grad
// CHECK: return

// Each weight gradient becomes one GEMM into its slot.
// GEMM-LABEL: func.func @micro_step
// GEMM-COUNT-2: bert.accumulate_linear_grad_weight
// GEMM-NOT: bias_grad
// GEMM: return
module {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?x?xi32>
    %t = bert.param "embed_tokens.weight" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x8xf32>
    %x = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %wq = bert.param "q_proj.weight" {group = "layer", trainable = true, decay = true, init = "normal"} : tensor<8x8xf32>
    %q = bert.linear %x, %wq : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %wh = bert.param "lm_head.weight" {group = "head", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
    %logits = bert.linear %q, %wh : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// RUN: bertc-opt %s -split-input-file -verify-diagnostics -bertc-plan-buffers -bertc-derive-eval-step

// The eval step returns the loss and its logits: a step that returns anything else has
// nothing to evaluate.
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4 : i64} {
  // expected-error @below {{@micro_step must return the result of a loss op (bert.cross_entropy, bert.mse_loss or bert.lm_head_loss) to be evaluated}}
  func.func @micro_step() -> tensor<?x2xf32> {
    %e = bert.param "e" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<4x2xf32>
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %h = bert.embedding %ids, %e : (tensor<?x?xi32>, tensor<4x2xf32>) -> tensor<?x?x2xf32>
    %cls = bert.select_token %h {index = 0 : i64} : (tensor<?x?x2xf32>) -> tensor<?x2xf32>
    return %cls : tensor<?x2xf32>
  }
}

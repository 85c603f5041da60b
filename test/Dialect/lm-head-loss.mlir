// RUN: bertc-opt %s | bertc-opt | FileCheck %s
// Round trip of the LM head loss, its gradient (with and without the weight's) and its
// accumulating form.

// CHECK-LABEL: func.func @lm_head_loss
func.func @lm_head_loss(%h: tensor<?x?x64xbf16>, %labels: tensor<?x?xi32>, %dloss: tensor<f32>) {
  %w = bert.param "lm_head.weight" {group = "head", trainable = true, decay = true, init = "normal"} : tensor<1000x64xbf16>
  // CHECK: bert.lm_head_loss %{{.*}}, %{{.*}}, %{{.*}} {token_chunk = 128 : i64} : (tensor<?x?x64xbf16>, tensor<1000x64xbf16>, tensor<?x?xi32>) -> tensor<f32>
  %loss = bert.lm_head_loss %h, %w, %labels {token_chunk = 128 : i64} : (tensor<?x?x64xbf16>, tensor<1000x64xbf16>, tensor<?x?xi32>) -> tensor<f32>
  // The defaults: no chunk chosen yet, scale 1.
  // CHECK: bert.lm_head_loss %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} : (
  %unchosen = bert.lm_head_loss %h, %w, %labels : (tensor<?x?x64xbf16>, tensor<1000x64xbf16>, tensor<?x?xi32>) -> tensor<f32>
  // CHECK: bert.lm_head_loss_grad {{.*}} {scale = 5.000000e-01 : f32, token_chunk = 7 : i64} : (tensor<f32>, tensor<?x?x64xbf16>, tensor<1000x64xbf16>, tensor<?x?xi32>) -> (tensor<?x?x64xbf16>, tensor<1000x64xf32>)
  %dh, %dw = bert.lm_head_loss_grad %dloss, %h, %w, %labels {token_chunk = 7 : i64, scale = 0.5 : f32} : (tensor<f32>, tensor<?x?x64xbf16>, tensor<1000x64xbf16>, tensor<?x?xi32>) -> (tensor<?x?x64xbf16>, tensor<1000x64xf32>)
  // A frozen weight gets no gradient: d hidden alone.
  // CHECK: bert.lm_head_loss_grad {{.*}} -> tensor<?x?x64xbf16>
  %dh2 = bert.lm_head_loss_grad %dloss, %h, %w, %labels {token_chunk = 7 : i64} : (tensor<f32>, tensor<?x?x64xbf16>, tensor<1000x64xbf16>, tensor<?x?xi32>) -> tensor<?x?x64xbf16>
  // CHECK: bert.accumulate_lm_head_loss_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {token_chunk = 7 : i64} : tensor<1000x64xbf16>, tensor<f32>, tensor<?x?x64xbf16>, tensor<?x?xi32> -> tensor<?x?x64xbf16>
  %dh3 = bert.accumulate_lm_head_loss_grad %w, %dloss, %h, %labels {token_chunk = 7 : i64} : tensor<1000x64xbf16>, tensor<f32>, tensor<?x?x64xbf16>, tensor<?x?xi32> -> tensor<?x?x64xbf16>
  return
}

// RUN: bertc-opt %s | bertc-opt | FileCheck %s
// Round trip of every bert op.

// CHECK-LABEL: func.func @forward
func.func @forward() -> tensor<f32> {
  // CHECK: bert.input "input_ids" : tensor<?x?xi32>
  %ids = bert.input "input_ids" : tensor<?x?xi32>
  %mask = bert.input "attention_mask" : tensor<?x?xi32>
  %labels = bert.input "labels" : tensor<?xi32>
  // CHECK: bert.param "bert.embeddings.word_embeddings.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<16x8xf32>
  %table = bert.param "bert.embeddings.word_embeddings.weight" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
  %gamma = bert.param "g" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<8xf32>
  %beta = bert.param "b" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
  %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
  %bias = bert.param "c" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
  // CHECK: bert.embedding %{{.*}}, %{{.*}} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %e = bert.embedding %ids, %table : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.add
  %s = bert.add %e, %e : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.layernorm {{.*}} {epsilon = 9.99999996E-13 : f32}
  %n = bert.layernorm %s, %gamma, %beta {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  // The fused residual add and LayerNorm (-bertc-fuse-add-layernorm): the sum and the output.
  // CHECK: bert.add_layernorm {{.*}} {epsilon = 9.99999996E-13 : f32} : {{.*}} -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  %fs, %fn = bert.add_layernorm %e, %s, %gamma, %beta {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  // With the dropout of its lhs folded in.
  // CHECK: bert.add_layernorm {{.*}} {dropout = 1.000000e-01 : f32, epsilon = 9.99999996E-13 : f32, stream = 5 : i32}
  %ds, %dn = bert.add_layernorm %e, %s, %gamma, %beta {epsilon = 1.0e-12 : f32, dropout = 0.1 : f32, stream = 5 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  // CHECK: bert.dropout {{.*}} {rate = 1.000000e-01 : f32, stream = 0 : i32}
  %d = bert.dropout %n {rate = 0.1 : f32, stream = 0 : i32} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.attention {{.*}} {dropout = 0.000000e+00 : f32, heads = 2 : i64, stream = 1 : i32} : {{.*}} -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  %a, %lse = bert.attention %d, %d, %d, %mask {heads = 2 : i64, dropout = 0.0 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  // CHECK: bert.gelu %{{.*}} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %g = bert.gelu %a : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // GELU's tanh approximation is printed; exact, the default, is not, even where written.
  // CHECK: bert.gelu %{{.*}} {approximate = #bert.gelu_approximation<tanh>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %gt = bert.gelu %a {approximate = #bert.gelu_approximation<tanh>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.gelu %{{.*}} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %ge = bert.gelu %a {approximate = #bert.gelu_approximation<none>} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.select_token {{.*}} {index = 0 : i64}
  %cls = bert.select_token %g {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
  // CHECK: bert.tanh
  %t = bert.tanh %cls : (tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: bert.linear
  %logits = bert.linear %t, %w, %bias : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  // CHECK: bert.cross_entropy {{.*}} -> tensor<f32>
  %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @backward
func.func @backward(%dy: tensor<?x?x8xf32>, %x: tensor<?x?x8xf32>, %dlogits: tensor<?x2xf32>,
                    %logits: tensor<?x2xf32>, %ids: tensor<?x?xi32>, %labels: tensor<?xi32>,
                    %mask: tensor<?x?xi32>, %g: tensor<8xf32>, %w: tensor<2x8xf32>, %cls: tensor<?x8xf32>,
                    %xlse: tensor<?x2x?xf32>) {
  // CHECK: bert.fill 1.000000e+00 : tensor<f32>
  %one = bert.fill 1.0 : tensor<f32>
  // CHECK: bert.embedding_grad
  %0 = bert.embedding_grad %dy, %ids : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<16x8xf32>
  // CHECK: bert.layernorm_grad
  %1:3 = bert.layernorm_grad %dy, %x, %g {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>)
  // CHECK: bert.linear_grad_input
  %2 = bert.linear_grad_input %dlogits, %w : (tensor<?x2xf32>, tensor<2x8xf32>) -> tensor<?x8xf32>
  // CHECK: bert.linear_grad_weight
  %3 = bert.linear_grad_weight %dlogits, %cls : (tensor<?x2xf32>, tensor<?x8xf32>) -> tensor<2x8xf32>
  // CHECK: bert.linear_grad_input {{.*}} {tf32}
  %tf32 = bert.linear_grad_input %dlogits, %w {tf32} : (tensor<?x2xf32>, tensor<2x8xf32>) -> tensor<?x8xf32>
  // CHECK: bert.linear_grad_input_add %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x2xf32>, tensor<2x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %dx = bert.linear_grad_input_add %dlogits, %w, %cls : (tensor<?x2xf32>, tensor<2x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: bert.bias_grad
  %4 = bert.bias_grad %dlogits : (tensor<?x2xf32>) -> tensor<2xf32>
  // CHECK: bert.gelu_grad %{{.*}}, %{{.*}} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %5 = bert.gelu_grad %dy, %x : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.gelu_grad %{{.*}}, %{{.*}} {approximate = #bert.gelu_approximation<tanh>} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %gt5 = bert.gelu_grad %dy, %x {approximate = #bert.gelu_approximation<tanh>} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.tanh_grad
  %6 = bert.tanh_grad %cls, %cls : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: bert.dropout_grad
  %7 = bert.dropout_grad %dy {rate = 0.1 : f32, stream = 0 : i32} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.attention_grad {{.*}} {dropout = 0.000000e+00 : f32, heads = 2 : i64, stream = 1 : i32}
  %8:3 = bert.attention_grad %dy, %x, %x, %x, %mask, %x, %xlse {heads = 2 : i64, dropout = 0.0 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x2x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  // CHECK: bert.select_token_grad
  %9 = bert.select_token_grad %cls {index = 0 : i64} : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.cross_entropy_grad
  %10 = bert.cross_entropy_grad %one, %logits, %labels : (tensor<f32>, tensor<?x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
  // CHECK: bert.flatten
  %11 = bert.flatten %x : (tensor<?x?x8xf32>) -> tensor<?x128xf32>
  // CHECK: bert.flatten_grad
  %12 = bert.flatten_grad %11 : (tensor<?x128xf32>) -> tensor<?x?x8xf32>
  return
}

// CHECK-LABEL: func.func @updates
func.func @updates(%dw: tensor<2x8xf32>, %dy: tensor<8x2xf32>, %lndy: tensor<?x?x8xf32>,
                   %lnx: tensor<?x?x8xf32>, %ids: tensor<?x?xi32>) {
  %g = bert.param "g" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<8xf32>
  %gb = bert.param "gb" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
  // CHECK: bert.accumulate_layernorm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999996E-13 : f32} : tensor<8xf32>, tensor<8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %lndx = bert.accumulate_layernorm_grad %g, %gb, %lndy, %lnx {epsilon = 1.0e-12 : f32} : tensor<8xf32>, tensor<8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
  // CHECK: bert.accumulate_grad %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8xf32>
  bert.accumulate_grad %w, %dw : tensor<2x8xf32>, tensor<2x8xf32>
  %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
  // CHECK: bert.accumulate_bias_grad %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<8x2xf32>
  bert.accumulate_bias_grad %b, %dy : tensor<2xf32>, tensor<8x2xf32>
  %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<30x8xf32>
  // CHECK: bert.accumulate_embedding_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<30x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>
  bert.accumulate_embedding_grad %t, %lndy, %ids : tensor<30x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>
  // CHECK: bert.gelu_grad_accumulate_bias %{{.*}}, %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  %gdx = bert.gelu_grad_accumulate_bias %b, %dy, %dy : tensor<2xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  // CHECK: bert.gelu_grad_accumulate_bias %{{.*}}, %{{.*}}, %{{.*}} {approximate = #bert.gelu_approximation<tanh>} : tensor<2xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  %gdxt = bert.gelu_grad_accumulate_bias %b, %dy, %dy {approximate = #bert.gelu_approximation<tanh>} : tensor<2xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  // CHECK: bert.dropout_grad_accumulate_bias %{{.*}}, %{{.*}} {rate = 1.000000e-01 : f32, stream = 2 : i32} : tensor<2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  %ddx = bert.dropout_grad_accumulate_bias %b, %dy {rate = 0.1 : f32, stream = 2 : i32} : tensor<2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  // CHECK: bert.gelu_grad_bias %{{.*}}, %{{.*}} : (tensor<8x2xf32>, tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<2xf32>)
  %gdx2, %gdb = bert.gelu_grad_bias %dy, %dy : (tensor<8x2xf32>, tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<2xf32>)
  // CHECK: bert.gelu_grad_bias %{{.*}}, %{{.*}} {approximate = #bert.gelu_approximation<tanh>} : (tensor<8x2xf32>, tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<2xf32>)
  %gdx2t, %gdbt = bert.gelu_grad_bias %dy, %dy {approximate = #bert.gelu_approximation<tanh>} : (tensor<8x2xf32>, tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<2xf32>)
  // CHECK: bert.dropout_grad_bias %{{.*}} {rate = 1.000000e-01 : f32, stream = 2 : i32} : (tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<2xf32>)
  %ddx2, %ddb = bert.dropout_grad_bias %dy {rate = 0.1 : f32, stream = 2 : i32} : (tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<2xf32>)
  // CHECK: bert.adamw %{{.*}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64} : tensor<2x8xf32>
  bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.01 : f64} : tensor<2x8xf32>
  // 8-bit moments in blocks of 2048 values.
  // CHECK: bert.adamw %{{.*}} {{{.*}}state_block = 2048 : i64{{.*}}} : tensor<2x8xf32>
  bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.01 : f64, state_block = 2048} : tensor<2x8xf32>
  return
}

// The task heads' ops: span positions and per-token classes through cross_entropy, the
// span head's transpose, and the regression loss.
// CHECK-LABEL: func.func @task_heads
func.func @task_heads(%per_token: tensor<?x?x2xf32>, %token_logits: tensor<?x?x5xf32>,
                      %predictions: tensor<?x1xf32>, %one: tensor<f32>) -> tensor<f32> {
  // CHECK: bert.input "labels" : tensor<?x2xi32>
  %positions = bert.input "labels" : tensor<?x2xi32>
  // CHECK: bert.input "labels" : tensor<?x?xi32>
  %tags = bert.input "labels" : tensor<?x?xi32>
  // CHECK: bert.input "labels" : tensor<?xf32>
  %targets = bert.input "labels" : tensor<?xf32>
  // CHECK: bert.transpose %{{.*}} : (tensor<?x?x2xf32>) -> tensor<?x2x?xf32>
  %starts_ends = bert.transpose %per_token : (tensor<?x?x2xf32>) -> tensor<?x2x?xf32>
  // CHECK: bert.cross_entropy %{{.*}}, %{{.*}} {scale = 5.000000e-01 : f32} : (tensor<?x2x?xf32>, tensor<?x2xi32>) -> tensor<f32>
  %span = bert.cross_entropy %starts_ends, %positions {scale = 0.5 : f32} : (tensor<?x2x?xf32>, tensor<?x2xi32>) -> tensor<f32>
  // CHECK: bert.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} {scale = 5.000000e-01 : f32}
  %dspan = bert.cross_entropy_grad %one, %starts_ends, %positions {scale = 0.5 : f32} : (tensor<f32>, tensor<?x2x?xf32>, tensor<?x2xi32>) -> tensor<?x2x?xf32>
  // CHECK: bert.cross_entropy %{{.*}}, %{{.*}} : (tensor<?x?x5xf32>, tensor<?x?xi32>) -> tensor<f32>
  %tokens = bert.cross_entropy %token_logits, %tags : (tensor<?x?x5xf32>, tensor<?x?xi32>) -> tensor<f32>
  // CHECK: bert.mse_loss %{{.*}}, %{{.*}} : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<f32>
  %mse = bert.mse_loss %predictions, %targets : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<f32>
  // CHECK: bert.mse_loss_grad
  %dmse = bert.mse_loss_grad %one, %predictions, %targets : (tensor<f32>, tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x1xf32>
  return %mse : tensor<f32>
}

// Mixed precision: casts between storage types and the loss-scaled seed.
// CHECK-LABEL: func.func @mixed_precision
func.func @mixed_precision(%x: tensor<?x?x8xbf16>) -> tensor<?x?x8xf16> {
  // CHECK: bert.cast %{{.*}} : (tensor<?x?x8xbf16>) -> tensor<?x?x8xf32>
  %wide = bert.cast %x : (tensor<?x?x8xbf16>) -> tensor<?x?x8xf32>
  // CHECK: bert.cast %{{.*}} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf16>
  %half = bert.cast %wide : (tensor<?x?x8xf32>) -> tensor<?x?x8xf16>
  // CHECK: bert.fill 1.000000e+00 {loss_scaled} : tensor<f32>
  %seed = bert.fill 1.0 {loss_scaled} : tensor<f32>
  return %half : tensor<?x?x8xf16>
}

// Plan-check instrumentation around an op.
// CHECK-LABEL: func.func @plan_checks
func.func @plan_checks(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  // CHECK: bert.plan_check_read %{{.*}} for "bert.gelu" : tensor<?x?x8xf32>
  bert.plan_check_read %x for "bert.gelu" : tensor<?x?x8xf32>
  %g = bert.gelu %x : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: bert.plan_check_define %{{.*}} : tensor<?x?x8xf32>
  bert.plan_check_define %g : tensor<?x?x8xf32>
  // CHECK: bert.plan_check_release %{{.*}} : tensor<?x?x8xf32>
  bert.plan_check_release %x : tensor<?x?x8xf32>
  return %g : tensor<?x?x8xf32>
}

// RUN: bertc-opt %s -split-input-file -bertc-mixed-precision=precision=bf16 | FileCheck %s
// RUN: bertc-opt %s -split-input-file -bertc-mixed-precision=precision=fp16 | FileCheck %s --check-prefix=FP16
// RUN: bertc-opt %s -split-input-file -bertc-mixed-precision=precision=fp32 | FileCheck %s --check-prefix=FP32
// RUN: bertc-opt %s -split-input-file -bertc-mixed-precision=precision=bf16 -bertc-plan-buffers="alignment=64 host-frozen-masters=true" | FileCheck %s --check-prefix=PLAN
// RUN: bertc-opt %s -split-input-file -bertc-mixed-precision=precision=bf16 -bertc-plan-buffers=alignment=64 | FileCheck %s --check-prefix=PLAN-CPU

// A train-stage module (embedding, LayerNorm with a frozen beta, the [CLS] token, a
// classifier) as -bertc-autodiff and -bertc-insert-optimizer leave it, all fp32.

// Parameters become bf16 working copies in both step functions; activations are bf16.
// CHECK: bert.precision = "bf16"
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[EMB:.*]] = bert.param "emb" {{.*}} : tensor<16x8xbf16>
// CHECK: %[[GAMMA:.*]] = bert.param "ln.weight" {{.*}} : tensor<8xbf16>
// CHECK: %[[BETA:.*]] = bert.param "ln.bias" {{.*}} : tensor<8xbf16>
// CHECK: %[[W:.*]] = bert.param "w" {{.*}} : tensor<2x8xbf16>
// CHECK: %[[B:.*]] = bert.param "b" {{.*}} : tensor<2xbf16>
// CHECK: %[[E:.*]] = bert.embedding {{.*}} -> tensor<?x?x8xbf16>
// CHECK: %[[N:.*]] = bert.layernorm %[[E]], %[[GAMMA]], %[[BETA]] {{.*}} -> tensor<?x?x8xbf16>
// CHECK: %[[CLS:.*]] = bert.select_token %[[N]] {{.*}} -> tensor<?x8xbf16>
// CHECK: %[[LOGITS:.*]] = bert.linear %[[CLS]], %[[W]], %[[B]] {{.*}} -> tensor<?x2xbf16>
// The loss has no 16-bit kernel: it reads an f32 cast, shared with its gradient.
// CHECK: %[[LOGITS32:.*]] = bert.cast %[[LOGITS]] : (tensor<?x2xbf16>) -> tensor<?x2xf32>
// CHECK: %[[LOSS:.*]] = bert.cross_entropy %[[LOGITS32]]
// bf16 needs no loss scaling: a plain seed.
// CHECK: %[[SEED:.*]] = bert.fill 1.000000e+00 : tensor<f32>
// CHECK: %[[DLOGITS32:.*]] = bert.cross_entropy_grad %[[SEED]], %[[LOGITS32]], {{.*}} -> tensor<?x2xf32>
// CHECK: %[[DLOGITS:.*]] = bert.cast %[[DLOGITS32]] : (tensor<?x2xf32>) -> tensor<?x2xbf16>
// CHECK: bert.linear_grad_input %[[DLOGITS]], %[[W]] {{.*}} -> tensor<?x8xbf16>
// Weight gradients are f32 from bf16 operands.
// CHECK: %[[DW:.*]] = bert.linear_grad_weight %[[DLOGITS]], %[[CLS]] : (tensor<?x2xbf16>, tensor<?x8xbf16>) -> tensor<2x8xf32>
// CHECK: %[[DB:.*]] = bert.bias_grad %[[DLOGITS]] : (tensor<?x2xbf16>) -> tensor<2xf32>
// CHECK: bert.layernorm_grad {{.*}} -> (tensor<?x?x8xbf16>, tensor<8xf32>, tensor<8xf32>)
// CHECK: %[[DEMB:.*]] = bert.embedding_grad {{.*}} -> tensor<16x8xf32>
// CHECK: bert.accumulate_grad %[[EMB]], %[[DEMB]] : tensor<16x8xbf16>, tensor<16x8xf32>
// CHECK: bert.accumulate_grad %[[W]], %[[DW]] : tensor<2x8xbf16>, tensor<2x8xf32>
// CHECK: return %[[LOSS]] : tensor<f32>
// AdamW updates the bf16 parameters (through their fp32 masters, see PLAN).
// CHECK-LABEL: func.func @optimizer_step
// CHECK: %[[EMB2:.*]] = bert.param "emb" {{.*}} : tensor<16x8xbf16>
// CHECK-NEXT: bert.adamw %[[EMB2]] {{.*}} : tensor<16x8xbf16>

// fp16: the same types in f16, and the seed carries the dynamic loss scale.
// FP16: bert.precision = "fp16"
// FP16: bert.param "emb" {{.*}} : tensor<16x8xf16>
// FP16: bert.linear {{.*}} -> tensor<?x2xf16>
// FP16: bert.fill 1.000000e+00 {loss_scaled} : tensor<f32>
// FP16: bert.linear_grad_weight {{.*}} -> tensor<2x8xf32>

// fp32 records the choice and changes nothing.
// FP32: bert.precision = "fp32"
// FP32-NOT: bf16
// FP32-NOT: f16
// FP32-NOT: bert.cast
// FP32: bert.fill 1.000000e+00 : tensor<f32>

// The plan (batch 4, seq 8, alignment 64) for a GPU (host-frozen-masters): bf16 working
// copies, fp32 masters for every trainable parameter, fp32 gradients and moments for the
// trainable ones; the frozen ln.bias's fp32 master (kept so that a checkpoint holds its
// exact fp32 values) in host memory, after the device arena: no step reads it.
//   parameters: emb 16*8*2 = 256 B @0, ln.weight 16 @256, ln.bias 16 @320, w 32 @384,
//               b 4 @448                                         [0, 452)
//   masters:    emb 512 @512, ln.weight 32 @1024, w 64 @1088, b 8 @1152
//                                                                [512, 1160): 648 B
//   gradients:  emb 512 @1216, ln.weight 32 @1728, w 64 @1792, b 8 @1856
//                                                                [1216, 1864): 648 B
//   ... device arena 5632 B; host: ln.bias master 32 B @5632, host_bytes 64 (aligned)
// PLAN: arena_bytes = 5696, parameters = [0, 452], master_weights = [512, 648], gradients = [1216, 648]
// PLAN-SAME: host_bytes = 64, frozen_masters = [5632, 32]>
// For the CPU, whose arena is host memory, the frozen master lies among the others:
//   masters:    emb 512 @512, ln.weight 32 @1024, ln.bias 32 @1088, w 64 @1152, b 8 @1216
//                                                                [512, 1224): 712 B
// PLAN-CPU: parameters = [0, 452], master_weights = [512, 712], gradients = [1280, 648]
// PLAN-CPU-NOT: frozen_masters
// PLAN-CPU: bert.param "ln.bias" {bert.slots = #bert.param_slots<{{.*}}value = 320{{.*}}master = 1088{{.*}}>,
// PLAN-LABEL: func.func @micro_step
// PLAN: bert.param "emb" {bert.slots = #bert.param_slots<{{.*}}value = 0{{.*}}master = 512{{.*}}grad = 1216{{.*}}adam_m = 1920{{.*}}adam_v = 2624{{.*}}>
// PLAN: bert.param "ln.bias" {bert.slots = #bert.param_slots<{{.*}}value = 320{{.*}}master = 5632{{.*}}>,
// PLAN-LABEL: func.func @optimizer_step
// PLAN: bert.param "emb" {{{.*}}bert.slots = #bert.param_slots<{{.*}}value = 0{{.*}}master = 512{{.*}}>
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %0 = bert.input "input_ids" : tensor<?x?xi32>
    %1 = bert.input "labels" : tensor<?xi32>
    %2 = bert.param "emb" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<16x8xf32>
    %3 = bert.param "ln.weight" {decay = false, group = "pooler", init = "ones", trainable = true} : tensor<8xf32>
    %4 = bert.param "ln.bias" {decay = false, group = "pooler", init = "zeros", trainable = false} : tensor<8xf32>
    %5 = bert.param "w" {decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    %6 = bert.param "b" {decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    %7 = bert.embedding %0, %2 : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %8 = bert.layernorm %7, %3, %4 {epsilon = 9.99999996E-13 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %9 = bert.select_token %8 {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %10 = bert.linear %9, %5, %6 : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %11 = bert.cross_entropy %10, %1 : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    %12 = bert.fill 1.000000e+00 : tensor<f32>
    %13 = bert.cross_entropy_grad %12, %10, %1 : (tensor<f32>, tensor<?x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
    %14 = bert.linear_grad_input %13, %5 : (tensor<?x2xf32>, tensor<2x8xf32>) -> tensor<?x8xf32>
    %15 = bert.linear_grad_weight %13, %9 : (tensor<?x2xf32>, tensor<?x8xf32>) -> tensor<2x8xf32>
    %16 = bert.bias_grad %13 : (tensor<?x2xf32>) -> tensor<2xf32>
    %17 = bert.select_token_grad %14 {index = 0 : i64} : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
    %inputGrad, %gammaGrad, %betaGrad = bert.layernorm_grad %17, %7, %3 {epsilon = 9.99999996E-13 : f32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>)
    %18 = bert.embedding_grad %inputGrad, %0 : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<16x8xf32>
    bert.accumulate_grad %2, %18 : tensor<16x8xf32>, tensor<16x8xf32>
    bert.accumulate_grad %3, %gammaGrad : tensor<8xf32>, tensor<8xf32>
    bert.accumulate_grad %5, %15 : tensor<2x8xf32>, tensor<2x8xf32>
    bert.accumulate_grad %6, %16 : tensor<2xf32>, tensor<2xf32>
    return %11 : tensor<f32>
  }
  func.func @optimizer_step() {
    %0 = bert.param "emb" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<16x8xf32>
    bert.adamw %0 {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64} : tensor<16x8xf32>
    %1 = bert.param "ln.weight" {decay = false, group = "pooler", init = "ones", trainable = true} : tensor<8xf32>
    bert.adamw %1 {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, epsilon = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64} : tensor<8xf32>
    %2 = bert.param "w" {decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
    bert.adamw %2 {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64} : tensor<2x8xf32>
    %3 = bert.param "b" {decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    bert.adamw %3 {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, epsilon = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64} : tensor<2xf32>
    return
  }
}

// -----

// A parameter read twice gets two f32 weight gradients; their sum stays f32 (no
// rounding to bf16 on the way to the gradient slot).
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[DW1:.*]] = bert.linear_grad_weight {{.*}} -> tensor<2x2xf32>
// CHECK: %[[DW2:.*]] = bert.linear_grad_weight {{.*}} -> tensor<2x2xf32>
// CHECK: %[[SUM:.*]] = bert.add %[[DW2]], %[[DW1]] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK: bert.accumulate_grad %{{.*}}, %[[SUM]] : tensor<2x2xbf16>, tensor<2x2xf32>
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64} {
  func.func @micro_step() -> tensor<f32> {
    %labels = bert.input "labels" : tensor<?xi32>
    %x = bert.param "x" {group = "pooler", trainable = false, decay = true, init = "normal"} : tensor<4x2xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x2xf32>
    %b = bert.param "b" {group = "classifier", trainable = false, decay = false, init = "zeros"} : tensor<2xf32>
    %h = bert.linear %x, %w, %b : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    %logits = bert.linear %h, %w, %b : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<4x2xf32>, tensor<?xi32>) -> tensor<f32>
    %seed = bert.fill 1.0 : tensor<f32>
    %dlogits = bert.cross_entropy_grad %seed, %logits, %labels : (tensor<f32>, tensor<4x2xf32>, tensor<?xi32>) -> tensor<4x2xf32>
    %dh = bert.linear_grad_input %dlogits, %w : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
    %dw1 = bert.linear_grad_weight %dlogits, %h : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
    %dw2 = bert.linear_grad_weight %dh, %x : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
    %dw = bert.add %dw2, %dw1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    bert.accumulate_grad %w, %dw : tensor<2x2xf32>, tensor<2x2xf32>
    return %loss : tensor<f32>
  }
}

// -----

// Attention's lse stays f32 beside its bf16 output, and attention_grad reads it as it is
// (no cast), with the output and the other operands in bf16.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[CTX:[^,]*]], %[[LSE:[^ ]*]] = bert.attention {{.*}} -> (tensor<?x?x8xbf16>, tensor<?x2x?xf32>)
// CHECK-NOT: bert.cast %[[LSE]]
// CHECK: bert.attention_grad {{.*}}, %[[CTX]], %[[LSE]] {{.*}} : ({{.*}}, tensor<?x?x8xbf16>, tensor<?x2x?xf32>) -> (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16>)
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %mask = bert.input "attention_mask" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<16x8xf32>
    %w = bert.param "w" {group = "classifier", trainable = false, decay = true, init = "normal"} : tensor<2x8xf32>
    %b = bert.param "b" {group = "classifier", trainable = false, decay = false, init = "zeros"} : tensor<2xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %ctx, %lse = bert.attention %e, %e, %e, %mask {heads = 2 : i64, dropout = 0.0 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
    %cls = bert.select_token %ctx {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    %seed = bert.fill 1.0 : tensor<f32>
    %dlogits = bert.cross_entropy_grad %seed, %logits, %labels : (tensor<f32>, tensor<?x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
    %dcls = bert.linear_grad_input %dlogits, %w : (tensor<?x2xf32>, tensor<2x8xf32>) -> tensor<?x8xf32>
    %dctx = bert.select_token_grad %dcls {index = 0 : i64} : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
    %dq, %dk, %dv = bert.attention_grad %dctx, %e, %e, %e, %mask, %ctx, %lse {heads = 2 : i64, dropout = 0.0 : f32, stream = 1 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x2x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
    %dqk = bert.add %dq, %dk : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %de = bert.add %dqk, %dv : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %dt = bert.embedding_grad %de, %ids : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<16x8xf32>
    bert.accumulate_grad %t, %dt : tensor<16x8xf32>, tensor<16x8xf32>
    return %loss : tensor<f32>
  }
}

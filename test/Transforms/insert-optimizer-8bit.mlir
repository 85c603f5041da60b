// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer="optimizer-state=8bit" | FileCheck %s

// With optimizer-state=8bit, of three trainable parameters of 4096 values each only the
// linear weight gets 8-bit moments: the two embedding tables (one of them the table of two
// lookups) keep fp32 ones, as bitsandbytes keeps embedding layers' state 32-bit.
// CHECK-LABEL: func.func @optimizer_step
// CHECK: %[[T:.*]] = bert.param "t"
// CHECK-NEXT: bert.adamw %[[T]] {beta1 = {{[^,]*}}, beta2 = {{[^,]*}}, epsilon = {{[^,]*}}, weight_decay = {{[^,}]*}}} : tensor<64x64xf32>
// CHECK: %[[P:.*]] = bert.param "p"
// CHECK-NEXT: bert.adamw %[[P]] {beta1 = {{[^,]*}}, beta2 = {{[^,]*}}, epsilon = {{[^,]*}}, weight_decay = {{[^,}]*}}} : tensor<64x64xf32>
// CHECK: %[[W:.*]] = bert.param "w"
// CHECK-NEXT: bert.adamw %[[W]] {{{.*}}state_block = 2048 : i64{{.*}}} : tensor<64x64xf32>
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 64, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %pos = bert.input "position_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x64xf32>
    %p = bert.param "p" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x64xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %q = bert.embedding %pos, %p : (tensor<?x?xi32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %r = bert.embedding %pos, %p : (tensor<?x?xi32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %s = bert.add %e, %q : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    %h = bert.add %s, %r : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    %cls = bert.select_token %h {index = 0 : i64} : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<64x64xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<64xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x64xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// RUN: bertc-opt %s -split-input-file -verify-diagnostics -bertc-autodiff -bertc-insert-optimizer -bertc-fuse-optimizer

// An update in the backward would change the step whenever it is not the last word on the
// parameter: with several micro-steps (batch 8 at a micro-batch of 4) the gradient is not
// complete after one backward.
// expected-error@below {{cannot run the optimizer in the backward: it needs one micro-step per optimizer step, and batch 8 runs as 2 micro-steps of 4 rows}}
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 8, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %labels = bert.input "labels" : tensor<?xi32>
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %x = bert.select_token %e {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %x, %w, %b : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// Clipping scales every gradient by the norm of all of them.
// expected-error@below {{cannot run the optimizer in the backward: max_grad_norm = 1.000000e+00 clips by the norm of every gradient, known only after the whole backward}}
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 1.0>} {
  func.func @micro_step() -> tensor<f32> {
    %labels = bert.input "labels" : tensor<?xi32>
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %x = bert.select_token %e {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %x, %w, %b : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// fp16's overflow check may skip the whole update.
// expected-error@below {{cannot run the optimizer in the backward: fp16's loss scaling skips the whole update when any gradient overflows}}
module attributes {bert.precision = "fp16", bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 8, initializer_range = 0.02, vocab = 64, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %labels = bert.input "labels" : tensor<?xi32>
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<64x16xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
    %x = bert.select_token %e {index = 0 : i64} : (tensor<?x?x16xf32>) -> tensor<?x16xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<8x16xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %logits = bert.linear %x, %w, %b : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

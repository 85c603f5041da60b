// RUN: bertc-opt %s -verify-diagnostics -bertc-autodiff -bertc-insert-optimizer -bertc-fuse-optimizer -bertc-plan-buffers="offload-optimizer=true"

// Updates in the backward run on the device: the optimizer cannot also be on the host.
// expected-error@+1 {{the optimizer cannot run both on the host (offload-optimizer) and in the backward (-bertc-fuse-optimizer)}}
module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 64, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x64xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x64xf32>) -> tensor<?x?x64xf32>
    %cls = bert.select_token %e {index = 0 : i64} : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<64x64xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<64xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x64xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

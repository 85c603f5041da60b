// RUN: bertc-opt %s -split-input-file -verify-diagnostics

// The activations region claims 64 bytes past the arena.
// expected-error@+1 {{#bert.plan region 'activations' [1216, 3328) is not inside the arena of 3264 bytes}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2112], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
}

// -----

// expected-error@+1 {{#bert.plan region 'scratch' [-64, 0) is not inside the arena of 3264 bytes}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [-64, 64], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 1472>} {
}

// -----

// expected-error@+1 {{#bert.plan loss 3264 is not an offset in the arena}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [768, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 2048], gemm_workspace = [0, 0], lower_bound_bytes = 3264, loss = 3264>} {
}

// -----

// A plan written as a dictionary is not a plan.
// expected-error@+1 {{'bert.plan' must be a #bert.plan attribute}}
module attributes {bert.plan = {arena_bytes = 3264 : i64}} {
}

// -----

// Every [train] setting is required.
// expected-error@+1 {{#bert.train needs 'max_grad_norm'}}
module attributes {bert.train = #bert.train<batch = 8, epochs = 3, steps = 0, lr = 2.0e-05, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "linear", warmup = 0.1, seed = 42, shuffle = true, num_labels = 2, initializer_range = 0.02, vocab = 30522, type_vocab = 2, task = "span">} {
}

// -----

// expected-error@+1 {{'dropout' is not a [train] setting}}
module attributes {bert.train = #bert.train<dropout = 0.1, batch = 8, epochs = 3, steps = 0, lr = 2.0e-05, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "linear", warmup = 0.1, seed = 42, shuffle = true, num_labels = 2, initializer_range = 0.02, vocab = 30522, type_vocab = 2, task = "span", max_grad_norm = 1.0>} {
}

// -----

// expected-error@+1 {{'batch' is given twice}}
module attributes {bert.train = #bert.train<batch = 4, batch = 8, epochs = 3, steps = 0, lr = 2.0e-05, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "linear", warmup = 0.1, seed = 42, shuffle = true, num_labels = 2, initializer_range = 0.02, vocab = 30522, type_vocab = 2, task = "span", max_grad_norm = 1.0>} {
}

// -----

// expected-error@+1 {{'ner' is not a task}}
module attributes {bert.train = #bert.train<batch = 8, epochs = 3, steps = 0, lr = 2.0e-05, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "linear", warmup = 0.1, seed = 42, shuffle = true, num_labels = 2, initializer_range = 0.02, vocab = 30522, type_vocab = 2, task = "ner", max_grad_norm = 1.0>} {
}

// -----

// expected-error@+1 {{'cosine' is not a learning-rate schedule}}
module attributes {bert.train = #bert.train<batch = 8, epochs = 3, steps = 0, lr = 2.0e-05, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "cosine", warmup = 0.1, seed = 42, shuffle = true, num_labels = 2, initializer_range = 0.02, vocab = 30522, type_vocab = 2, task = "span", max_grad_norm = 1.0>} {
}

// -----

// expected-error@+1 {{#bert.train batch must be positive, not 0}}
module attributes {bert.train = #bert.train<batch = 0, epochs = 3, steps = 0, lr = 2.0e-05, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "linear", warmup = 0.1, seed = 42, shuffle = true, num_labels = 2, initializer_range = 0.02, vocab = 30522, type_vocab = 2, task = "span", max_grad_norm = 1.0>} {
}

// -----

// With host_bytes, the host-resident end of the arena [2048, 3264) holds only the frozen
// masters, the master weights and the optimizer state: the gradients may not be there.
// expected-error@+1 {{#bert.plan region 'gradients' [2048, 2120) must lie before the host-resident end of the arena (from 2048)}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [2048, 72], optimizer_state = [2304, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 768], gemm_workspace = [0, 0], lower_bound_bytes = 1984, loss = 1472, host_bytes = 1216>} {
}

// -----

// The optimizer state lies on the device or in host memory, not across the two.
// expected-error@+1 {{#bert.plan region 'optimizer_state' [1984, 2184) must lie wholly before or wholly in the host-resident end of the arena (from 2048)}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [1984, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 768], gemm_workspace = [0, 0], lower_bound_bytes = 1984, loss = 1472, host_bytes = 1216>} {
}

// -----

// The frozen masters, which no step reads, are in the host-resident end.
// expected-error@+1 {{#bert.plan region 'frozen_masters' [768, 968) must lie last, in the host-resident end of the arena (from 2048)}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [2304, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 768], gemm_workspace = [0, 0], lower_bound_bytes = 1984, loss = 1472, host_bytes = 1216, frozen_masters = [768, 200]>} {
}

// -----

// ... and last, after an offloaded optimizer's masters and state.
// expected-error@+1 {{#bert.plan region 'frozen_masters' [2048, 2248) must lie last, in the host-resident end of the arena (from 2048)}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [2304, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 768], gemm_workspace = [0, 0], lower_bound_bytes = 1984, loss = 1472, host_bytes = 1216, frozen_masters = [2048, 200]>} {
}

// -----

// The master weights and the optimizer state lie on the same side: the host's AdamW reads
// both, or the device's.
// expected-error@+1 {{#bert.plan regions 'master_weights' and 'optimizer_state' must lie on the same side of the host-resident end of the arena (from 2048)}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [768, 200], gradients = [640, 72], optimizer_state = [2304, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 768], gemm_workspace = [0, 0], lower_bound_bytes = 1984, loss = 1472, host_bytes = 1216>} {
}

// -----

// The plan's bounds are counts of rows and tokens.
// expected-error@+1 {{'bert.max_batch' must be an i64 of at least 1}}
module attributes {bert.max_batch = 0 : i64} {
}

// -----

// expected-error@+1 {{'bert.max_seq' must be an i64 of at least 1}}
module attributes {bert.max_seq = "128"} {
}

// -----

// expected-error@+1 {{'bert.precision' must be "fp32", "bf16" or "fp16"}}
module attributes {bert.precision = "int4"} {
}

// -----

// expected-error@+1 {{'bert.optimizer_on_host' must be a unit attribute}}
module attributes {bert.optimizer_on_host = true} {
}

// -----

// Offloaded checkpoints' host copies are in the host-resident end.
// expected-error@+1 {{#bert.plan region 'host_activations' [1984, 2112) must lie in the host-resident end of the arena (from 2048)}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [2304, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 768], gemm_workspace = [0, 0], lower_bound_bytes = 1984, loss = 1472, host_bytes = 1216, host_activations = [1984, 128]>} {
}

// -----

// Embedding tables in host memory are in the host-resident end, before the frozen masters.
// expected-error@+1 {{#bert.plan region 'host_parameters' [1984, 2112) must lie in the host-resident end of the arena (from 2048)}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [2304, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 768], gemm_workspace = [0, 0], lower_bound_bytes = 1984, loss = 1472, host_bytes = 1216, host_parameters = [1984, 128]>} {
}

// -----

// The frozen masters come after the embedding tables.
// expected-error@+1 {{#bert.plan region 'frozen_masters' [3072, 3264) must lie last, in the host-resident end of the arena (from 2048)}}
module attributes {bert.plan = #bert.plan<arena_bytes = 3264, parameters = [0, 584], master_weights = [0, 0], gradients = [640, 72], optimizer_state = [2304, 200], scratch = [1024, 0], inputs = [1024, 144], activations = [1216, 768], gemm_workspace = [0, 0], lower_bound_bytes = 1984, loss = 1472, host_bytes = 1216, frozen_masters = [3072, 192], host_parameters = [3200, 64]>} {
}

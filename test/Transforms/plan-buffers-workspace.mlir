// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64 gemm-workspace=1000" | FileCheck %s
// RUN: bertc-opt %s -bertc-autodiff -bertc-insert-optimizer -bertc-plan-buffers="alignment=64" | FileCheck %s --check-prefix=CPU

// The CUDA kernels' workspace: LayerNorm keeps a mean and an rstd per row, 2 x 4 rows x 2
// fp32 = 64 B, one scratch slot @1536 (after the optimizer state [1024, 1480), aligned)
// that the forward and the backward both use. Inputs follow @1600, activations @1728.
// CHECK: bert.plan = #bert.plan<arena_bytes = 12224,
// CHECK-SAME: scratch = [1536, 64], inputs = [1600, 72], activations = [1728, 1028],
// The CUDA runtime's workspace comes last: 1728 + 1028 = 2756, aligned 2816; the GEMM
// library's 1000 bytes, then @3840 the optimizer's tables: 4 trainable parameters of one
// AdamW chunk each (4 x 32 B), 1024 partial sums (8192 B), the norm and the overflow flag
// (4 B each) = 8328 B, ending at 12168 -> 12224.
// CHECK-SAME: gemm_workspace = [2816, 9352],
// CHECK: bert.layernorm {{.*}}bert.workspace = 1536 : i64
// CHECK: bert.layernorm_grad {{.*}}bert.workspace = 1536 : i64

// Without it (the CPU target) every other offset is the same and the arena ends at 2816.
// CPU: bert.plan = #bert.plan<arena_bytes = 2816,
// CPU-SAME: scratch = [1536, 64], inputs = [1600, 72], activations = [1728, 1028],
// CPU-SAME: gemm_workspace = [2816, 0],
module attributes {bert.max_batch = 2 : i64, bert.max_seq = 4 : i64, bert.train = #bert.train<batch = 2, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x8xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %gamma = bert.param "gamma" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<8xf32>
    %beta = bert.param "beta" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<8xf32>
    %n = bert.layernorm %e, %gamma, %beta {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %cls = bert.select_token %n {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %w = bert.param "w" {group = "classifier", trainable = true, decay = true, init = "normal"} : tensor<2x8xf32>
    %b = bert.param "b" {group = "classifier", trainable = true, decay = false, init = "zeros"} : tensor<2xf32>
    %logits = bert.linear %cls, %w, %b : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

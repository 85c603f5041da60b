// RUN: bertc-opt %s -bertc-autodiff -bertc-dequantize-at-use | FileCheck %s
// RUN: bertc-opt %s -bertc-autodiff -bertc-dequantize-at-use -bertc-insert-optimizer -bertc-mixed-precision=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: bertc-opt %s -bertc-autodiff -bertc-dequantize-at-use -bertc-insert-optimizer -bertc-mixed-precision=precision=bf16 -bertc-schedule-for-memory -bertc-plan-buffers="alignment=64" -bertc-verify-budget | FileCheck %s --check-prefix=PLAN

// A QLoRA stack: layer 0's frozen NF4 weight with an adapter, then layer 1's frozen NF4
// weight alone. The backward needs layer 1's weight again (the input gradient into the
// adapter's layer), and gets its own dequantization right before that GEMM; layer 0's
// input comes from a frozen embedding, so its weight is read once.
// CHECK-LABEL: func.func @micro_step
// CHECK: %[[Q0:.*]] = bert.param "l0.weight"
// CHECK: %[[W0:.*]] = bert.dequantize %[[Q0]]
// CHECK: bert.linear %{{.*}}, %[[W0]]
// CHECK: %[[Q1:.*]] = bert.param "l1.weight"
// CHECK: %[[W1:.*]] = bert.dequantize %[[Q1]]
// CHECK: bert.linear %{{.*}}, %[[W1]]
// CHECK: %[[DY:.*]] = bert.cross_entropy_grad
// CHECK: %[[W1B:.*]] = bert.dequantize %[[Q1]] {weight = #bert.quantized<nf4_double_quant, [4, 64]>}
// CHECK-NEXT: bert.linear_grad_input %[[DY]], %[[W1B]]
// CHECK-NOT: bert.dequantize %[[Q0]]
// CHECK-NOT: bert.linear_grad_input %{{.*}}, %[[W0]]

// In bf16 the weights stay bytes and their dequantizations give bf16 values.
// BF16: bert.param "l0.weight" {{.*}} : tensor<3232xi8>
// BF16: bert.dequantize %{{.*}} : (tensor<3232xi8>) -> tensor<64x64xbf16>
// BF16: bert.param "l1.weight" {{.*}} : tensor<1264xi8>
// BF16-COUNT-2: bert.dequantize %{{.*}} : (tensor<1264xi8>) -> tensor<4x64xbf16>

// The weights' bytes, NF4 with double quantization, each part 16-byte aligned: 64 x 64 is
// 2048 bytes of codes, 64 absmax codes (to 2112), the nested absmax (to 2128), the mean (to
// 2144) and the maps (64 + 1024): 3232; 4 x 64 is 128 + 4 (to 144) + 4 (to 160) + 4 (to 176)
// + 1088: 1264.
// Planned: a value slot for each, no fp32 master (frozen, of a LoRA module), and the three
// dequantizations are transients like any activation (here each takes the bytes the one
// before it left).
// PLAN: bert.param "l0.weight" {bert.slots = #bert.param_slots<value = {{[0-9]+}}>,
// PLAN: bert.dequantize {{.*}}bert.offsets = array<i64: [[W:[0-9]+]]>
// PLAN: bert.param "l1.weight" {bert.slots = #bert.param_slots<value = {{[0-9]+}}>,
// PLAN-COUNT-2: bert.dequantize {{.*}}bert.offsets = array<i64: [[W]]>

module attributes {bert.adapter_config = "{}", bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = #bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = "constant", warmup = 0.0, seed = 42, shuffle = false, num_labels = 4, initializer_range = 0.02, vocab = 16, type_vocab = 2, task = "classification", max_grad_norm = 0.0>} {
  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<16x64xf32>
    %e = bert.embedding %ids, %t : (tensor<?x?xi32>, tensor<16x64xf32>) -> tensor<?x?x64xf32>
    %x = bert.select_token %e {index = 0 : i64} : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
    %q0 = bert.param "l0.weight" {group = "encoder.layer.0", trainable = false, decay = true, init = "normal",
                                  quantized = #bert.quantized<nf4_double_quant, [64, 64]>} : tensor<3232xi8>
    %w0 = bert.dequantize %q0 {weight = #bert.quantized<nf4_double_quant, [64, 64]>} : (tensor<3232xi8>) -> tensor<64x64xf32>
    %a = bert.param "l0.lora_A.weight" {group = "encoder.layer.0", trainable = true, decay = true, init = "kaiming_uniform"} : tensor<2x64xf32>
    %b = bert.param "l0.lora_B.weight" {group = "encoder.layer.0", trainable = true, decay = true, init = "zeros"} : tensor<64x2xf32>
    %base = bert.linear %x, %w0 : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %down = bert.linear %x, %a : (tensor<?x64xf32>, tensor<2x64xf32>) -> tensor<?x2xf32>
    %up = bert.linear %down, %b : (tensor<?x2xf32>, tensor<64x2xf32>) -> tensor<?x64xf32>
    %h = bert.add %base, %up : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %q1 = bert.param "l1.weight" {group = "encoder.layer.1", trainable = false, decay = true, init = "normal",
                                  quantized = #bert.quantized<nf4_double_quant, [4, 64]>} : tensor<1264xi8>
    %w1 = bert.dequantize %q1 {weight = #bert.quantized<nf4_double_quant, [4, 64]>} : (tensor<1264xi8>) -> tensor<4x64xf32>
    %y = bert.linear %h, %w1 : (tensor<?x64xf32>, tensor<4x64xf32>) -> tensor<?x4xf32>
    %loss = bert.cross_entropy %y, %labels : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

//===- BertOps.td - ops of the bert dialect ----------------*- tablegen -*-===//
//
// Forward ops carry their gradient rule (GradientOpInterface); backward ops are the
// rules' building blocks. Shape checks live in the C++ verifiers (BertOps.cpp) so that
// each diagnostic can say which dimension disagrees.
//
//===----------------------------------------------------------------------===//

#ifndef BERT_OPS
#define BERT_OPS

include "bert/BertDialect.td"
include "bert/BertEnums.td"
include "bert/BertAttributes.td"
include "bert/BertInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Bert_FloatTensor : RankedTensorOf<[F32, BF16, F16]>;
def Bert_IntTensor : RankedTensorOf<[I32]>;
def Bert_Scalar : 0DTensorOf<[F32]>;
def Bert_QuantizedBytes : 1DTensorOf<[I8]>;

class Bert_Op<string mnemonic, list<Trait> traits = []>
    : Op<Bert_Dialect, mnemonic, traits>;

// `costOverrides` names the CostOpInterface methods an op defines itself (the default is
// one elementwise kernel: a flop per result element, every operand and result byte once).
class Bert_ForwardOp<string mnemonic, list<Trait> traits = [],
                     list<string> costOverrides = []>
    : Bert_Op<mnemonic, traits # [Pure, DeclareOpInterfaceMethods<Bert_GradientOpInterface>,
                                  DeclareOpInterfaceMethods<Bert_CostOpInterface,
                                                            costOverrides>]> {
  let hasVerifier = 1;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

class Bert_BackwardOp<string mnemonic, list<Trait> traits = [],
                      list<string> costOverrides = []>
    : Bert_Op<mnemonic, traits # [Pure, DeclareOpInterfaceMethods<Bert_CostOpInterface,
                                                             costOverrides>]> {
  let hasVerifier = 1;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Leaves: inputs and parameters
//===----------------------------------------------------------------------===//

def Bert_InputOp : Bert_Op<"input", [Pure]> {
  let summary = "a per-batch input the runtime fills";
  let description = [{
    One of `input_ids`, `token_type_ids`, `position_ids`, `attention_mask` ([batch,
    seq]), all int32, or `labels`: int32 classes [batch], f32 regression targets
    [batch], int32 span start/end positions [batch, 2] or int32 token classes [batch, seq].

    ```mlir
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs RankedTensorOf<[I32, F32]>:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Bert_ParamOp : Bert_Op<"param", [Pure]> {
  let summary = "a model parameter";
  let description = [{
    Reads a parameter, named as in Hugging Face checkpoints. `group` is the freeze
    group (`embeddings`, `encoder.layer.N`, `pooler`, `classifier`); `trainable` is
    false for frozen groups; `decay` says whether AdamW's weight decay applies (not to
    biases or LayerNorm weights); `init` is how it starts without a checkpoint (normal,
    zeros, ones, or kaiming_uniform: a LoRA adapter's lora_A, as PEFT draws it).
    `checkpoint_transposed` marks a matrix that checkpoints hold as [in, out]
    (transformers' Conv1D, GPT-2's projections) while the step reads it as a linear
    layer's [out, in]: loading and saving transpose it. `init_scale` narrows a
    `normal` init: its standard deviation is the run's initializer_range times this
    (GPT-2's residual projections, 1 / sqrt(2 n_layer)); absent, 1.

    A frozen matrix may be stored `quantized` (a LoRA job's NF4 or int8 base): the
    result is then its layout's bytes, a `tensor<Nxi8>`, which only `bert.dequantize`
    reads; the attribute gives the shape the values stand for.

    ```mlir
    %w = bert.param "classifier.weight" {group = "classifier", trainable = true,
                                         decay = true, init = "normal"} : tensor<2x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$group, BoolAttr:$trainable, BoolAttr:$decay,
                       StrAttr:$init, UnitAttr:$checkpoint_transposed,
                       OptionalAttr<F64Attr>:$init_scale,
                       OptionalAttr<Bert_QuantizedWeightAttr>:$quantized);
  let results = (outs RankedTensorOf<[F32, BF16, F16, I8]>:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The tensor the parameter stands for: its result's type, or for a quantized one
    /// an f32 tensor of the shape it dequantizes to.
    ::mlir::RankedTensorType getValueType();
  }];
}

def Bert_FillOp : Bert_Op<"fill", [Pure]> {
  let summary = "a scalar constant";
  let description = [{
    The seed of the backward pass (d loss / d loss = 1). With `loss_scaled` (fp16
    mixed precision) the value is multiplied by the runtime's dynamic loss scale, so
    every gradient of the backward is scaled by it.

    ```mlir
    %one = bert.fill 1.0 : tensor<f32>
    %seed = bert.fill 1.0 {loss_scaled} : tensor<f32>
    ```
  }];
  let arguments = (ins F32Attr:$value, UnitAttr:$loss_scaled);
  let results = (outs Bert_Scalar:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Type":$type, "::mlir::FloatAttr":$value), [{
      build($_builder, $_state, type, value, /*loss_scaled=*/nullptr);
    }]>
  ];
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

def Bert_EmbeddingOp : Bert_ForwardOp<"embedding", [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "table lookup: out[b, s, :] = table[ids[b, s], :]";
  let description = [{
    ```mlir
    %e = bert.embedding %ids, %table
        : (tensor<?x?xi32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
    ```
    With `padding_idx`, that row of the table gets no gradient, as in a torch
    `nn.Embedding(padding_idx=...)` (BERT's word embeddings: [PAD]).
  }];
  let arguments = (ins Bert_IntTensor:$ids, Bert_FloatTensor:$table,
                       OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_AddOp : Bert_ForwardOp<"add",
    [Bert_StorageTypedWith<["computesInF32"]>, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Bert_InPlaceOpInterface, ["getReusableOperands"]>]> {
  let summary = "elementwise sum (residual connections, embedding sums)";
  let description = [{
    ```mlir
    %s = bert.add %a, %b : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$lhs, Bert_FloatTensor:$rhs);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_LayerNormOp : Bert_ForwardOp<"layernorm", [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "LayerNorm over the last dimension";
  let description = [{
    ```mlir
    %y = bert.layernorm %x, %gamma, %beta {epsilon = 1.0e-12 : f32}
        : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, Bert_FloatTensor:$gamma,
                       Bert_FloatTensor:$beta, F32Attr:$epsilon);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_AddLayerNormOp : Bert_Op<"add_layernorm", [Pure,
    DeclareOpInterfaceMethods<Bert_InPlaceOpInterface, ["getReusableOperands"]>,
    DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "a residual add and the LayerNorm of its sum, in one kernel";
  let description = [{
    `sum` = `lhs` + `rhs` (rounded to the storage type, as `bert.add`) and `output` =
    LayerNorm(`sum`) (as `bert.layernorm`), from one pass over each row
    (-bertc-fuse-add-layernorm). With a `dropout` rate, `lhs` is dropped out first, as a
    `bert.dropout` with that rate and `stream` would (its value rounded to the storage type
    before the add): the dropout before a residual add folded in. The sum is kept for the
    backward, which normalises it again; it may take over an addend's bytes. Created after
    the backward exists, so it has no gradient rule.

    ```mlir
    %s, %y = bert.add_layernorm %a, %b, %gamma, %beta
        {epsilon = 1.0e-12 : f32, dropout = 1.0e-01 : f32, stream = 2 : i32}
        : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>)
          -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>)
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$lhs, Bert_FloatTensor:$rhs, Bert_FloatTensor:$gamma,
                       Bert_FloatTensor:$beta, F32Attr:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0f">:$dropout,
                       DefaultValuedAttr<I32Attr, "0">:$stream);
  let results = (outs Bert_FloatTensor:$sum, Bert_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Bert_LinearOp : Bert_ForwardOp<"linear", [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "y = x W^T (+ b) over the last dimension (torch.nn.Linear layout)";
  let description = [{
    The bias is optional: decoder projections and LM heads have none
    (torch.nn.Linear(bias=False)), and then neither the forward's epilogue nor the
    backward's column sum exists. With `tf32` (fp32 operands only, set by
    `-bertc-lower-to-target`), the GEMM's multiplies take its operands rounded to TF32
    (10 mantissa bits) on tensor cores and accumulate in fp32; so do its gradient ops'.

    ```mlir
    %y = bert.linear %x, %w, %b
        : (tensor<?x?x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %q = bert.linear %x, %wq : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, Bert_FloatTensor:$weight,
                       Optional<Bert_FloatTensor>:$bias, UnitAttr:$tf32);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_GeluOp : Bert_ForwardOp<"gelu",
    [Bert_StorageTyped, SameOperandsAndResultType, Bert_InPlaceOpInterface],
    ["estimateKernels"]> {
  let summary = "GELU: exact (erf), or its tanh approximation";
  let description = [{
    x Φ(x), Φ the standard normal CDF, as torch.nn.functional.gelu: from erf (BERT's),
    or, with `approximate` tanh, 0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x^3))) (GPT-2's;
    Hugging Face's `gelu_new`). Its gradient ops carry the same `approximate`; exact is
    the default and is not printed.

    ```mlir
    %y = bert.gelu %x : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    %t = bert.gelu %x {approximate = #bert.gelu_approximation<tanh>}
        : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, Bert_GeluApproximateArg:$approximate);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_TanhOp : Bert_ForwardOp<"tanh",
    [Bert_StorageTyped, SameOperandsAndResultType, Bert_InPlaceOpInterface]> {
  let summary = "tanh (the pooler's activation)";
  let description = [{
    ```mlir
    %y = bert.tanh %x : (tensor<?x32xf32>) -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_ReluOp : Bert_ForwardOp<"relu",
    [Bert_StorageTyped, SameOperandsAndResultType, Bert_InPlaceOpInterface]> {
  let summary = "max(x, 0) (a custom head's activation)";
  let description = [{
    ```mlir
    %y = bert.relu %x : (tensor<?x32xf32>) -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_DropoutOp : Bert_ForwardOp<"dropout", [Bert_StorageTyped, SameOperandsAndResultType,
                                                Bert_InPlaceOpInterface], ["estimateKernels"]> {
  let summary = "inverted dropout with a counter-based mask";
  let description = [{
    The mask is a pure function of (seed, step, `stream`, element index), so the
    backward (and any recomputation) regenerates it instead of storing it. Every
    dropout in a module has its own `stream`.

    ```mlir
    %y = bert.dropout %x {rate = 1.0e-01 : f32, stream = 3 : i32}
        : (tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, F32Attr:$rate, I32Attr:$stream);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_AttentionOp : Bert_ForwardOp<"attention",
    [Bert_StorageTypedWith<["keepsF32Result"]>], ["estimateKernels"]> {
  let summary = "fused multi-head self-attention with a padding or causal mask";
  let description = [{
    ctx = dropout(softmax(q k^T / sqrt(d) + mask_bias)) v for each of `heads` heads of
    d = query features / heads dimensions (not necessarily the model's hidden / heads).
    The query and the result are [batch, seq, heads * d], the key and value [batch, seq,
    kv_heads * d]: with `kv_heads` (0, the default, means `heads`; it divides `heads`),
    query head h reads key/value head h / (heads / kv_heads), transformers' repeat_kv
    order (grouped-query attention), and no key or value is ever repeated in memory.

    Without `causal`, key k is visible to every query iff mask[k] != 0. With `causal`,
    key k is visible to query q iff k <= q, mask[k] != 0 and mask[k] == mask[q]: the
    mask's non-zero values are document ids, so packed sequences (mask 1,1,1,2,2,3,...)
    never attend across documents, and a padded row is 1...1 0...0. A query whose mask
    is 0 then sees no key.

    The [seq, seq] probabilities are never kept. The second result, `lse` (fp32 [batch,
    heads, seq] whatever the storage type), is each query row's log-sum-exp of its masked
    scores, which the backward recomputes the probabilities from (p = exp(s - lse))
    without running the forward again. A row whose every key is masked scores exactly
    -FLT_MAX on each key it reaches (all of them, or with `causal` keys 0 to q; the bias
    absorbs the product), so its probabilities are uniform over those keys and its lse,
    -FLT_MAX + log(count), rounds to -FLT_MAX: the kernels recognise it by that value.

    `head_chunk` (set by `-bertc-lower-to-target`) chooses the kernel: 0, a fused kernel
    that never forms a [seq, seq] matrix (fp32 products on CUDA cores, or tensor cores for
    16-bit storage); n > 0, GEMMs on tensor cores over n heads at a time (a multiple of
    heads / kv_heads, so that a chunk holds whole groups), whose [n, batch, seq, seq]
    scores and probabilities (rounded to the storage type) live in the op's kernel
    workspace. The fused kernels skip the keys a causal query block cannot reach; the
    GEMMs compute every score and the mask zeroes the unreachable ones.
    With `tf32` (fp32 and head_chunk > 0 only, set by `-bertc-lower-to-target`) those
    GEMMs round their operands to TF32, as bert.linear's `tf32` does.

    ```mlir
    %ctx, %lse = bert.attention %q, %k, %v, %mask {heads = 4 : i64, dropout = 0.0 : f32,
                                                  stream = 1 : i32}
        : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?xi32>)
          -> (tensor<?x?x32xf32>, tensor<?x4x?xf32>)
    // A decoder's: 4 query heads of 8 dims over 2 key/value heads, causal.
    %ctx, %lse = bert.attention %q, %k, %v, %mask {heads = 4 : i64, kv_heads = 2 : i64,
                                                  causal, dropout = 0.0 : f32,
                                                  stream = 1 : i32}
        : (tensor<?x?x32xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>, tensor<?x?xi32>)
          -> (tensor<?x?x32xbf16>, tensor<?x4x?xf32>)
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$query, Bert_FloatTensor:$key,
                       Bert_FloatTensor:$value, Bert_IntTensor:$mask,
                       I64Attr:$heads, F32Attr:$dropout, I32Attr:$stream,
                       DefaultValuedAttr<I64Attr, "0">:$head_chunk, UnitAttr:$tf32,
                       DefaultValuedAttr<I64Attr, "0">:$kv_heads, UnitAttr:$causal);
  let results = (outs Bert_FloatTensor:$result, RankedTensorOf<[F32]>:$lse);
  let extraClassDeclaration = [{
    /// The key/value heads: kv_heads, or heads where it is 0.
    int64_t getKeyValueHeads() { return getKvHeads() ? getKvHeads() : getHeads(); }
    /// The head dimension where key/value heads serve groups of query heads (the backward
    /// kernels' fp32 group sums: attentionScratchFloats, attentionBackwardWorkspaceBytes),
    /// else 0.
    int64_t getGroupedHeadDim();
  }];
}

def Bert_CrossEntropyOp : Bert_ForwardOp<"cross_entropy"> {
  let summary = "softmax cross-entropy over the last dimension, summed over rows";
  let description = [{
    Logits [batch, classes] with labels [batch], or [batch, n, classes] with labels
    [batch, n] (one row per token, or per span end). A row whose label lies outside
    [0, classes) adds nothing: PyTorch's ignore_index -100, and span positions past the
    sequence (which Hugging Face clamps to its ignore index). The sum is multiplied by
    `scale` and divided by the runtime's loss normalizer (the rows, or labelled tokens,
    of the whole optimizer step), so micro-batches add up to the batch mean.

    ```mlir
    %loss = bert.cross_entropy %logits, %labels
        : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    %span = bert.cross_entropy %positions, %starts_ends {scale = 5.0e-01 : f32}
        : (tensor<?x2x?xf32>, tensor<?x2xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$logits, Bert_IntTensor:$labels,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let results = (outs Bert_Scalar:$result);
}

def Bert_CastOp : Bert_ForwardOp<"cast"> {
  let summary = "converts a tensor to another float element type (f32, bf16, f16)";
  let description = [{
    Same shape, another element type; narrowing rounds to nearest, ties to even.
    `-bertc-mixed-precision` inserts casts around ops without 16-bit kernels, which
    then run in fp32. Its gradient is the cast of the result's gradient back to the
    input's type.

    ```mlir
    %y = bert.cast %x : (tensor<?x?x32xbf16>) -> tensor<?x?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input);
  let results = (outs Bert_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Task heads: regression loss and the span head's layout
//===----------------------------------------------------------------------===//

def Bert_TransposeOp : Bert_ForwardOp<"transpose", [], ["estimateKernels"]> {
  let summary = "swaps the last two dimensions: [batch, m, n] -> [batch, n, m]";
  let description = [{
    The span head's [batch, seq, 2] logits become [batch, 2, seq]: a row of start
    logits and a row of end logits, each a softmax over the positions. Its gradient
    is the same swap of the result's gradient.

    ```mlir
    %t = bert.transpose %x : (tensor<?x?x2xf32>) -> tensor<?x2x?xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_MseLossOp : Bert_ForwardOp<"mse_loss"> {
  let summary = "squared error of one prediction per row, summed over rows";
  let description = [{
    torch.nn.MSELoss on predictions [batch, 1] against f32 targets [batch] (Hugging
    Face's regression head, num_labels = 1), the sum divided by the runtime's loss
    normalizer (the rows of the optimizer step), so micro-batches add up to the mean.

    ```mlir
    %loss = bert.mse_loss %predictions, %targets
        : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$predictions, RankedTensorOf<[F32]>:$targets);
  let results = (outs Bert_Scalar:$result);
}

// The gradient of each forward op (their GradientOpInterface rules create them).
include "bert/BertGradientOps.td"
// RMSNorm, SiLU, mul and rotary embeddings, with their gradients: Llama-family decoders.
include "bert/BertDecoderOps.td"
// A LoRA adapter's scaling.
include "bert/BertAdapterOps.td"
// Pooling tokens and shaping features: the pooler's [CLS] and a custom head's ops.
include "bert/BertHeadShapeOps.td"
// What writes the gradient slots and the parameters.
include "bert/BertParameterUpdateOps.td"
// Forward tensors waiting in host memory for the backward.
include "bert/BertOffloadOps.td"
// What a trainer built with plan checks reports to its checker around each op.
include "bert/BertPlanCheckOps.td"

#endif // BERT_OPS

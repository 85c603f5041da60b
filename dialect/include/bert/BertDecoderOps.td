//===- BertDecoderOps.td - the ops of Llama-family decoders -*- tablegen -*-===//
//
// RMSNorm, SiLU, the elementwise product of a gated MLP, rotary position embeddings and the
// causal-LM head's loss, with their gradient ops. Numerics follow Hugging Face
// transformers' Llama. Included by BertOps.td after the op classes.
//
//===----------------------------------------------------------------------===//

def Bert_RmsNormOp : Bert_ForwardOp<"rms_norm", [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "RMSNorm over the last dimension (LlamaRMSNorm)";
  let description = [{
    y = weight * round(x * rsqrt(mean(x^2) + epsilon)), the mean over the last dimension
    and the statistics in fp32 (accumulated in double) whatever the storage type; the
    normalised value is rounded to the storage type before the weight multiplies it, as
    transformers casts it back to the input's dtype first. The backward recomputes the
    statistics from x: no per-row tensor lives from the forward to the backward.

    ```mlir
    %y = bert.rms_norm %x, %w {epsilon = 1.0e-05 : f32}
        : (tensor<?x?x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, Bert_FloatTensor:$weight, F32Attr:$epsilon);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_SiluOp : Bert_ForwardOp<"silu",
    [Bert_StorageTyped, SameOperandsAndResultType, Bert_InPlaceOpInterface],
    ["estimateKernels"]> {
  let summary = "x * sigmoid(x) (the gate of a SiLU-gated MLP)";
  let description = [{
    ```mlir
    %y = bert.silu %x : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_MulOp : Bert_ForwardOp<"mul",
    [Bert_StorageTyped, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<Bert_InPlaceOpInterface, ["getReusableOperands"]>]> {
  let summary = "elementwise product of two tensors of one shape";
  let description = [{
    The gated MLP's silu(gate) * up. Its gradients are products too: d lhs = dy * rhs and
    d rhs = dy * lhs, each a `bert.mul`.

    ```mlir
    %h = bert.mul %g, %u : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$lhs, Bert_FloatTensor:$rhs);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_RopeOp : Bert_ForwardOp<"rope",
    [Bert_StorageTyped, Bert_InPlaceOpInterface], ["estimateKernels"]> {
  let summary = "rotary position embedding of a [batch, seq, heads * head_dim] projection";
  let description = [{
    transformers' apply_rotary_pos_emb with rotate_half: in each of `heads` heads of d
    values, for i < d/2, with angle = position * inv_freq[i] (an fp32 product) and its
    cos and sin in fp32,
    y[i] = x[i] cos - x[i + d/2] sin and y[i + d/2] = x[i + d/2] cos + x[i] sin.
    `positions` is the int32 [batch, seq] position_ids input (packed documents restart
    it, so a position is not the token's index). `inv_freq` holds the d/2 inverse
    frequencies, rope_theta and rope_scaling applied by the frontend. With 16-bit
    storage the rotation is computed in fp32 from the fp32 cos and sin and rounded once,
    where transformers rounds cos and sin and each product to the storage type: bertc's
    value is the more accurate, within a rounding step of the storage type of theirs.
    The result may take over the input's bytes (a pair is read before it is written).

    ```mlir
    %q = bert.rope %x, %pos {heads = 2 : i64, inv_freq = array<f32: 1.0, 0.1>}
        : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, Bert_IntTensor:$positions, I64Attr:$heads,
                       DenseF32ArrayAttr:$inv_freq);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_RmsNormGradOp : Bert_BackwardOp<"rms_norm_grad",
    [Bert_StorageTypedWith<["keepsF32Result"]>], ["estimateKernels"]> {
  let summary = "d input and d weight of RMSNorm (statistics recomputed)";
  let description = [{
    With r = rsqrt(mean(x^2) + epsilon) per row, recomputed from x:
    d x = r (w dy - x r^2 mean(w dy x)) and d weight (fp32) = dy * round(x r) summed over
    the rows.

    ```mlir
    %dx, %dw = bert.rms_norm_grad %dy, %x, %w {epsilon = 1.0e-05 : f32}
        : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<32xf32>)
          -> (tensor<?x?x32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$input,
                       Bert_FloatTensor:$weight, F32Attr:$epsilon);
  let results = (outs Bert_FloatTensor:$inputGrad, Bert_FloatTensor:$weightGrad);
}

def Bert_SiluGradOp : Bert_BackwardOp<"silu_grad", [Bert_StorageTyped, Bert_InPlaceOpInterface],
                                      ["estimateKernels"]> {
  let summary = "d x = dy * s * (1 + x * (1 - s)), s = sigmoid(x)";
  let description = [{
    ```mlir
    %dx = bert.silu_grad %dy, %x
        : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$input);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_RopeGradOp : Bert_BackwardOp<"rope_grad", [Bert_StorageTyped, Bert_InPlaceOpInterface],
                                      ["estimateKernels"]> {
  let summary = "d x of rotary embedding: the rotation of dy by -angle";
  let description = [{
    dx[i] = dy[i] cos + dy[i + d/2] sin and dx[i + d/2] = dy[i + d/2] cos - dy[i] sin, the
    angles those of the forward. The positions get no gradient.

    ```mlir
    %dx = bert.rope_grad %dy, %pos {heads = 2 : i64, inv_freq = array<f32: 1.0, 0.1>}
        : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_IntTensor:$positions, I64Attr:$heads,
                       DenseF32ArrayAttr:$inv_freq);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

//===----------------------------------------------------------------------===//
// The causal-LM head and its loss, never materializing [tokens, vocab] logits
//===----------------------------------------------------------------------===//

def Bert_LmHeadLossOp : Bert_ForwardOp<"lm_head_loss",
    [Bert_StorageTypedWith<["keepsF32Result"]>], ["estimateKernels"]> {
  let summary = "next-token cross-entropy of a bias-less LM head, in chunks of tokens";
  let description = [{
    logits = hidden weight^T (weight [vocab, hidden], torch.nn.Linear's layout and the
    embedding table's, so a tied embedding is passed as it is), then per token the softmax
    cross-entropy against its label in fp32 whatever the storage type (hidden and weight
    in the storage type, fp32 accumulation). A token whose label lies outside [0, vocab)
    (-100) adds nothing. The sum is multiplied by `scale` and divided by the runtime's
    loss normalizer, as `bert.cross_entropy`'s (the labelled tokens of the whole optimizer
    step, Hugging Face Trainer's num_items_in_batch). The labels are the next tokens
    already (the data loader shifts them).

    The batch's tokens are taken `token_chunk` at a time: only a [token_chunk, vocab]
    fp32 logits block ever exists, in the op's kernel workspace (bertc/abi/lm_head_loss.h).
    0 means not chosen yet: `-bertc-lower-to-target` chooses it. The logits are kept in
    fp32 (Hugging Face rounds them to the storage type before its fp32 softmax). Nothing
    is saved for the backward, which recomputes each chunk's logits: a per-token log-sum-exp
    would save one pass over a block of the backward, which the chunk's three GEMMs (hidden
    times larger) dwarf, at the price of a tensor living from the forward to the backward.

    ```mlir
    %loss = bert.lm_head_loss %h, %w, %labels {token_chunk = 128 : i64}
        : (tensor<?x?x64xbf16>, tensor<1000x64xbf16>, tensor<?x?xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$hidden, Bert_FloatTensor:$weight, Bert_IntTensor:$labels,
                       DefaultValuedAttr<I64Attr, "0">:$token_chunk,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let results = (outs Bert_Scalar:$result);
}

def Bert_LmHeadLossGradOp : Bert_BackwardOp<"lm_head_loss_grad",
    [Bert_StorageTypedWith<["keepsF32Result", "readsOperandAsIs"]>], ["estimateKernels"]> {
  let summary = "d hidden and d weight of bert.lm_head_loss, chunk by chunk";
  let description = [{
    Per chunk of `token_chunk` tokens: the logits recomputed into the workspace's block,
    d logits = (softmax - onehot(label)) * dloss * scale / normalizer (zero rows for ignored
    labels) rewritten in place in the storage type, then d hidden[chunk] = d logits weight
    and d weight += d logits^T hidden[chunk] (fp32). The weight gradient is a result only
    where the weight needs one (a frozen LM head gets d hidden alone).

    ```mlir
    %dh, %dw = bert.lm_head_loss_grad %dloss, %h, %w, %labels {token_chunk = 128 : i64}
        : (tensor<f32>, tensor<?x?x64xbf16>, tensor<1000x64xbf16>, tensor<?x?xi32>)
          -> (tensor<?x?x64xbf16>, tensor<1000x64xf32>)
    ```
  }];
  let arguments = (ins Bert_Scalar:$resultGrad, Bert_FloatTensor:$hidden,
                       Bert_FloatTensor:$weight, Bert_IntTensor:$labels,
                       DefaultValuedAttr<I64Attr, "0">:$token_chunk,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let results = (outs Bert_FloatTensor:$hiddenGrad, Optional<Bert_FloatTensor>:$weightGrad);
}

def Bert_AccumulateLmHeadLossGradOp : Bert_Op<"accumulate_lm_head_loss_grad",
    [MemoryEffects<[MemWrite]>,
     DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "bert.lm_head_loss_grad with d weight added into the weight's gradient slot";
  let description = [{
    `bert.lm_head_loss_grad` and the `bert.accumulate_grad` of its weight gradient as one
    op (-bertc-accumulate-in-gemm): each chunk's d weight GEMM runs with beta = 1 into the
    parameter's fp32 gradient slot, so no [vocab, hidden] fp32 gradient tensor exists. The
    parameter is the LM head's weight; with tied embeddings the embedding's gradient adds
    into the same slot.

    ```mlir
    %dh = bert.accumulate_lm_head_loss_grad %w, %dloss, %h, %labels {token_chunk = 128 : i64}
        : tensor<1000x64xbf16>, tensor<f32>, tensor<?x?x64xbf16>, tensor<?x?xi32>
          -> tensor<?x?x64xbf16>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$param, Bert_Scalar:$resultGrad,
                       Bert_FloatTensor:$hidden, Bert_IntTensor:$labels,
                       DefaultValuedAttr<I64Attr, "0">:$token_chunk,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let results = (outs Bert_FloatTensor:$hiddenGrad);
  let assemblyFormat = [{
    $param `,` $resultGrad `,` $hidden `,` $labels attr-dict `:` type($param) `,`
    type($resultGrad) `,` type($hidden) `,` type($labels) `->` type($hiddenGrad)
  }];
  let hasVerifier = 1;
}

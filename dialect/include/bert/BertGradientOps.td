//===- BertGradientOps.td - backward ops -------------------*- tablegen -*-===//
//
// The ops the forward ops' gradient rules create (GradientRules.cpp). Included by
// BertOps.td after the op classes; each is a Bert_BackwardOp.
//
//===----------------------------------------------------------------------===//

def Bert_EmbeddingGradOp : Bert_BackwardOp<"embedding_grad",
    [Bert_StorageTypedWith<["keepsF32Result"]>, Bert_SlotAccumulable],
    ["estimateKernels"]> {
  let summary = "d table: scatter-add of the output gradient rows by id";
  let description = [{
    The row `padding_idx`, when given, stays zero (its tokens add nothing).
  }];
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_IntTensor:$ids,
                       OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs Bert_FloatTensor:$tableGrad);
}

def Bert_LayerNormGradOp : Bert_BackwardOp<"layernorm_grad",
    [Bert_StorageTypedWith<["keepsF32Result"]>], ["estimateKernels"]> {
  let summary = "d input, d gamma, d beta of LayerNorm (statistics recomputed)";
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$input,
                       Bert_FloatTensor:$gamma, F32Attr:$epsilon);
  let results = (outs Bert_FloatTensor:$inputGrad, Bert_FloatTensor:$gammaGrad,
                      Bert_FloatTensor:$betaGrad);
}

def Bert_LinearGradInputOp : Bert_BackwardOp<"linear_grad_input",
    [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "d x = dy W (`tf32` as bert.linear's)";
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$weight,
                       UnitAttr:$tf32);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_LinearGradInputAddOp : Bert_BackwardOp<"linear_grad_input_add",
    [DeclareOpInterfaceMethods<Bert_InPlaceOpInterface, ["getReusableOperands"]>],
    ["estimateKernels"]> {
  let summary = "d x = dy W + addend, as one GEMM (`tf32` as bert.linear's)";
  let description = [{
    `bert.linear_grad_input` and the `bert.add` of its result to another gradient of the
    same tensor (a residual's, another projection's) as one GEMM with beta = 1 and the
    addend as C (-bertc-accumulate-in-gemm): the product is added in fp32 and rounded
    once, with no tensor for it and no pass over it to add it. The result may take over
    the addend's bytes.
  }];
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$weight,
                       Bert_FloatTensor:$addend, UnitAttr:$tf32);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_LinearGradWeightOp : Bert_BackwardOp<"linear_grad_weight",
    [Bert_StorageTypedWith<["keepsF32Result"]>, Bert_SlotAccumulable],
    ["estimateKernels"]> {
  let summary = "d W = dy^T x, summed over every row (`tf32` as bert.linear's)";
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$input,
                       UnitAttr:$tf32);
  let results = (outs Bert_FloatTensor:$weightGrad);
}

def Bert_BiasGradOp : Bert_BackwardOp<"bias_grad",
    [Bert_StorageTypedWith<["keepsF32Result"]>, Bert_SlotAccumulable]> {
  let summary = "d b = dy summed over every row";
  let arguments = (ins Bert_FloatTensor:$resultGrad);
  let results = (outs Bert_FloatTensor:$biasGrad);
}

def Bert_GeluGradOp : Bert_BackwardOp<"gelu_grad", [Bert_StorageTyped, Bert_InPlaceOpInterface],
                                      ["estimateKernels"]> {
  let summary = "d x = dy * gelu'(x) (`approximate` as bert.gelu's)";
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$input,
                       Bert_GeluApproximateArg:$approximate);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_TanhGradOp : Bert_BackwardOp<"tanh_grad", [Bert_StorageTyped, Bert_InPlaceOpInterface]> {
  let summary = "d x = dy * (1 - y^2), from the forward result y";
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$result);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_ReluGradOp : Bert_BackwardOp<"relu_grad", [Bert_StorageTyped, Bert_InPlaceOpInterface]> {
  let summary = "d x = dy where y > 0, else 0, from the forward result y";
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$result);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_DropoutGradOp : Bert_BackwardOp<"dropout_grad",
    [Bert_StorageTyped, Bert_InPlaceOpInterface], ["estimateKernels"]> {
  let summary = "d x = dy * mask / (1 - rate), the mask regenerated from `stream`";
  let arguments = (ins Bert_FloatTensor:$resultGrad, F32Attr:$rate, I32Attr:$stream);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_GeluGradBiasOp : Bert_BackwardOp<"gelu_grad_bias", [Bert_InPlaceOpInterface],
                                          ["estimateKernels"]> {
  let summary = "d x = dy * gelu'(x), and d x summed over every row";
  let description = [{
    `bert.gelu_grad` and the `bert.bias_grad` of its result (the bias gradient of the
    linear layer the GELU follows) as one op (-bertc-accumulate-in-gemm, where the bias
    gradient is not accumulated into a slot: an update in the backward reads it), with
    the `bert.gelu_grad`'s `approximate`. On CUDA one kernel writes d x and sums the values
    it stored, with the bits of the two ops.

    ```mlir
    %dx, %db = bert.gelu_grad_bias %dy, %x
        : (tensor<?x?x128xbf16>, tensor<?x?x128xbf16>) -> (tensor<?x?x128xbf16>, tensor<128xf32>)
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$input,
                       Bert_GeluApproximateArg:$approximate);
  let results = (outs Bert_FloatTensor:$inputGrad, Bert_FloatTensor:$biasGrad);
}

def Bert_DropoutGradBiasOp : Bert_BackwardOp<"dropout_grad_bias", [Bert_InPlaceOpInterface],
                                             ["estimateKernels"]> {
  let summary = "dropout's d x, and d x summed over every row";
  let description = [{
    `bert.dropout_grad` and the `bert.bias_grad` of its result as one op, as
    `bert.gelu_grad_bias`; the mask is regenerated from `stream` as `bert.dropout_grad`
    regenerates it.
  }];
  let arguments = (ins Bert_FloatTensor:$resultGrad, F32Attr:$rate, I32Attr:$stream);
  let results = (outs Bert_FloatTensor:$inputGrad, Bert_FloatTensor:$biasGrad);
}

def Bert_AttentionGradOp : Bert_BackwardOp<"attention_grad",
    [Bert_StorageTypedWith<["readsOperandAsIs"]>], ["estimateKernels"]> {
  let summary = "d q, d k, d v of fused attention (probabilities from the saved lse)";
  let description = [{
    The forward's probabilities are not kept: the kernels recompute them from the scores
    and the forward's log-sum-exp (`lse`), and take each query row's term
    r = rowsum(dctx * ctx) from the forward's `output` (kept anyway as the input of the
    output projection). The forward never runs again. `heads`, `kv_heads` and `causal`
    are the forward's (bert.attention): dq has the query's type, dk and dv the key's and
    value's, and each key/value head's gradient is the sum over its group of query heads
    (in fp32, rounded once). A query that sees no key (padding, with `causal`) adds
    exactly nothing where its dctx is zero. `head_chunk` and `tf32` choose the kernel as
    bert.attention's do; the tensor-core one keeps two score blocks in its workspace, and
    with kv_heads < heads the chunk's per-query-head dk and dv in fp32 too.

    ```mlir
    %dq, %dk, %dv = bert.attention_grad %dctx, %q, %k, %v, %mask, %ctx, %lse
        {heads = 4 : i64, dropout = 0.1 : f32, stream = 1 : i32}
        : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>,
           tensor<?x?xi32>, tensor<?x?x32xf32>, tensor<?x4x?xf32>)
          -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>)
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$query,
                       Bert_FloatTensor:$key, Bert_FloatTensor:$value,
                       Bert_IntTensor:$mask, Bert_FloatTensor:$output,
                       RankedTensorOf<[F32]>:$lse, I64Attr:$heads, F32Attr:$dropout,
                       I32Attr:$stream, DefaultValuedAttr<I64Attr, "0">:$head_chunk,
                       UnitAttr:$tf32, DefaultValuedAttr<I64Attr, "0">:$kv_heads,
                       UnitAttr:$causal);
  let results = (outs Bert_FloatTensor:$queryGrad, Bert_FloatTensor:$keyGrad,
                      Bert_FloatTensor:$valueGrad);
  let extraClassDeclaration = [{
    /// The key/value heads: kv_heads, or heads where it is 0.
    int64_t getKeyValueHeads() { return getKvHeads() ? getKvHeads() : getHeads(); }
    /// The head dimension where key/value heads serve groups of query heads (the backward
    /// kernels' fp32 group sums: attentionScratchFloats, attentionBackwardWorkspaceBytes),
    /// else 0.
    int64_t getGroupedHeadDim();
  }];
}

def Bert_CrossEntropyGradOp : Bert_BackwardOp<"cross_entropy_grad"> {
  let summary = "d logits = d loss * scale * (softmax(logits) - onehot(labels)) / rows";
  let arguments = (ins Bert_Scalar:$resultGrad, Bert_FloatTensor:$logits,
                       Bert_IntTensor:$labels, DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let results = (outs Bert_FloatTensor:$logitsGrad);
}

def Bert_MseLossGradOp : Bert_BackwardOp<"mse_loss_grad"> {
  let summary = "d predictions = d loss * 2 (predictions - targets) / rows";
  let arguments = (ins Bert_Scalar:$resultGrad, Bert_FloatTensor:$predictions,
                       RankedTensorOf<[F32]>:$targets);
  let results = (outs Bert_FloatTensor:$predictionsGrad);
}

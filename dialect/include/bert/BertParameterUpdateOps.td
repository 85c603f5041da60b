//===- BertParameterUpdateOps.td - gradient slots and AdamW --*- tablegen -*-===//
//
// The ops that write a parameter's gradient slot or the parameter itself: a gradient
// added into its slot, alone or (-bertc-accumulate-in-gemm) by the op that computes it,
// and the AdamW update. Included by BertOps.td after the op classes; their verifiers are
// in ParameterUpdateOps.cpp.
//
//===----------------------------------------------------------------------===//

def Bert_AccumulateGradOp : Bert_Op<"accumulate_grad",
    [Bert_StorageTypedWith<["readsOperandAsIs"]>, MemoryEffects<[MemWrite]>,
    DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "adds a gradient into its parameter's gradient slot";
  let description = [{
    The gradient slots persist across the micro-batches of one optimizer step; the
    runtime zeroes them before the first.

    ```mlir
    bert.accumulate_grad %w, %dw : tensor<2x64xf32>, tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$param, Bert_FloatTensor:$grad);
  let assemblyFormat = "$param `,` $grad attr-dict `:` type($param) `,` type($grad)";
  let hasVerifier = 1;
}

def Bert_AccumulateLinearGradWeightOp : Bert_Op<"accumulate_linear_grad_weight",
    [MemoryEffects<[MemWrite]>,
     DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "adds dy^T x into a linear weight's gradient slot, as one GEMM";
  let description = [{
    `bert.linear_grad_weight` and the `bert.accumulate_grad` of its result as one GEMM
    with beta = 1 whose output is the parameter's fp32 gradient slot (cuBLASLt's C = D,
    sgemm's C): no temporary for the weight gradient and no pass over it to add it
    (-bertc-accumulate-in-gemm). `tf32` as the gradient GEMM's.

    ```mlir
    bert.accumulate_linear_grad_weight %w, %dy, %x
        : tensor<2x64xf32>, tensor<?x2xf32>, tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$param, Bert_FloatTensor:$resultGrad,
                       Bert_FloatTensor:$input, UnitAttr:$tf32);
  let assemblyFormat = [{
    $param `,` $resultGrad `,` $input attr-dict `:` type($param) `,` type($resultGrad) `,`
    type($input)
  }];
  let hasVerifier = 1;
}

def Bert_AccumulateBiasGradOp : Bert_Op<"accumulate_bias_grad",
    [MemoryEffects<[MemWrite]>,
     DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "adds dy summed over every row into a bias's gradient slot, in one kernel";
  let description = [{
    `bert.bias_grad` and the `bert.accumulate_grad` of its result as one column sum whose
    last pass adds each column's total to the parameter's fp32 gradient slot: no
    temporary for the bias gradient and no launch to add it (-bertc-accumulate-in-gemm).
    The total is formed first and then added, as the pair did, so the slot gets the same
    bits.

    ```mlir
    bert.accumulate_bias_grad %b, %dy : tensor<2xf32>, tensor<?x2xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$param, Bert_FloatTensor:$resultGrad);
  let assemblyFormat = "$param `,` $resultGrad attr-dict `:` type($param) `,` type($resultGrad)";
  let hasVerifier = 1;
}

def Bert_AccumulateEmbeddingGradOp : Bert_Op<"accumulate_embedding_grad",
    [MemoryEffects<[MemWrite]>,
     DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "adds dy's rows into an embedding table's gradient slot by id";
  let description = [{
    `bert.embedding_grad` and the `bert.accumulate_grad` of its result as one scatter-add
    straight into the table's fp32 gradient slot (-bertc-accumulate-in-gemm): no temporary
    table gradient (the table's size in fp32), no zeroing of it and no pass adding it to
    the slot. The rows of an id add into the slot one by one (on the CPU, in token order;
    on CUDA, a tile of tokens at a time), where the pair added their sum once: an id seen
    more than once can round differently in the last place.

    ```mlir
    bert.accumulate_embedding_grad %table, %dy, %ids
        : tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?xi32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$param, Bert_FloatTensor:$resultGrad,
                       Bert_IntTensor:$ids, OptionalAttr<I64Attr>:$padding_idx);
  let assemblyFormat = [{
    $param `,` $resultGrad `,` $ids attr-dict `:` type($param) `,` type($resultGrad) `,`
    type($ids)
  }];
  let hasVerifier = 1;
}

def Bert_GeluGradAccumulateBiasOp : Bert_Op<"gelu_grad_accumulate_bias",
    [MemoryEffects<[MemWrite]>,
     DeclareOpInterfaceMethods<Bert_InPlaceOpInterface, ["getReusableOperands"]>,
     DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "GELU's d input, with its column sums added into a bias's gradient slot";
  let description = [{
    `bert.gelu_grad` and the `bert.accumulate_bias_grad` of its result (the bias of the
    linear layer the GELU follows) as one op (-bertc-accumulate-in-gemm), with the
    `bert.gelu_grad`'s `approximate`: on CUDA one kernel writes d input and sums the values
    it stored, so d input is not read again for the bias. The slot gets the bits of the two
    ops. d input may take over d y's bytes.

    ```mlir
    %dx = bert.gelu_grad_accumulate_bias %b, %dy, %x
        : tensor<128xf32>, tensor<?x?x128xf32>, tensor<?x?x128xf32> -> tensor<?x?x128xf32>
    %tx = bert.gelu_grad_accumulate_bias %b, %dy, %x {approximate = #bert.gelu_approximation<tanh>}
        : tensor<128xf32>, tensor<?x?x128xf32>, tensor<?x?x128xf32> -> tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$param, Bert_FloatTensor:$resultGrad,
                       Bert_FloatTensor:$input, Bert_GeluApproximateArg:$approximate);
  let results = (outs Bert_FloatTensor:$inputGrad);
  let assemblyFormat = [{
    $param `,` $resultGrad `,` $input attr-dict `:` type($param) `,` type($resultGrad) `,`
    type($input) `->` type($inputGrad)
  }];
  let hasVerifier = 1;
}

def Bert_DropoutGradAccumulateBiasOp : Bert_Op<"dropout_grad_accumulate_bias",
    [MemoryEffects<[MemWrite]>,
     DeclareOpInterfaceMethods<Bert_InPlaceOpInterface, ["getReusableOperands"]>,
     DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "dropout's d input, with its column sums added into a bias's gradient slot";
  let description = [{
    `bert.dropout_grad` and the `bert.accumulate_bias_grad` of its result (the bias of the
    linear layer the dropout follows) as one op (-bertc-accumulate-in-gemm), as
    `bert.gelu_grad_accumulate_bias`: the mask is regenerated from `stream` as
    `bert.dropout_grad` regenerates it, and the slot gets the bits of the two ops.

    ```mlir
    %dx = bert.dropout_grad_accumulate_bias %b, %dy {rate = 0.1 : f32, stream = 3 : i32}
        : tensor<64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$param, Bert_FloatTensor:$resultGrad, F32Attr:$rate,
                       I32Attr:$stream);
  let results = (outs Bert_FloatTensor:$inputGrad);
  let assemblyFormat = [{
    $param `,` $resultGrad attr-dict `:` type($param) `,` type($resultGrad) `->`
    type($inputGrad)
  }];
  let hasVerifier = 1;
}

def Bert_AccumulateLayerNormGradOp : Bert_Op<"accumulate_layernorm_grad",
    [MemoryEffects<[MemWrite]>,
     DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "LayerNorm's d input, with d gamma and d beta added into their gradient slots";
  let description = [{
    `bert.layernorm_grad` and the `bert.accumulate_grad`s of its gamma and beta
    gradients as one op: the column sums' last pass adds each column's totals to the
    parameters' fp32 gradient slots, so neither gradient is a temporary and neither
    takes a launch to add (-bertc-accumulate-in-gemm). The totals are formed first and
    then added, as the three ops did, so the slots get the same bits.

    ```mlir
    %dx = bert.accumulate_layernorm_grad %gamma, %beta, %dy, %x {epsilon = 1.0e-12 : f32}
        : tensor<64xf32>, tensor<64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>
          -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$gamma, Bert_FloatTensor:$beta,
                       Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$input, F32Attr:$epsilon);
  let results = (outs Bert_FloatTensor:$inputGrad);
  let assemblyFormat = [{
    $gamma `,` $beta `,` $resultGrad `,` $input attr-dict `:` type($gamma) `,` type($beta) `,`
    type($resultGrad) `,` type($input) `->` type($inputGrad)
  }];
  let hasVerifier = 1;
}

def Bert_AdamWOp : Bert_Op<"adamw", [MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "one torch.optim.AdamW update of a parameter from its gradient slot";
  let description = [{
    Decoupled weight decay as torch.optim.AdamW; the learning rate of the step comes
    from the runtime's schedule. The moments live in the optimizer-state region. The
    hyper-parameters are f64 because torch derives 1 - beta and the bias corrections
    from Python floats. With `state_block` the moments are 8-bit, as bitsandbytes'
    Adam8bit keeps them (abi/adamw_8bit_state.h): one code per value and one fp32
    absmax per block of `state_block` (256 or 2048) values; without it they are fp32.

    With a `grad` operand (-bertc-fuse-optimizer) the update runs inside @micro_step,
    in the backward, from that fp32 gradient instead of the gradient slot: it must
    follow every other reader of the parameter, since it rewrites the parameter.

    ```mlir
    bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64,
                   weight_decay = 0.01 : f64} : tensor<2x64xf32>
    bert.adamw %e {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64,
                   state_block = 2048 : i64, weight_decay = 0.01 : f64} : tensor<64x64xf32>
    bert.adamw %w, %dw {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64,
                        weight_decay = 0.01 : f64} : tensor<2x64xf32>, tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$param, Optional<Bert_FloatTensor>:$grad,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$epsilon, F64Attr:$weight_decay,
                       OptionalAttr<I64Attr>:$state_block);
  let assemblyFormat = [{
    $param (`,` $grad^)? attr-dict `:` type($param) (`,` type($grad)^)?
  }];
  let hasVerifier = 1;
}

//===- BertHeadShapeOps.td - pooling tokens, shaping features -*- tablegen -*-===//
//
// What turns the encoder's [batch, seq, hidden] into a head's [batch, features]: one
// token (the pooler's [CLS]), the mean or maximum over a row's real tokens, the tokens laid
// end to end; and a custom head's concatenation and slices of the last dimension. Each
// forward op, then its gradient. Included by BertOps.td.
//
//===----------------------------------------------------------------------===//

def Bert_SelectTokenOp : Bert_ForwardOp<"select_token", [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "one token's vector per row ([CLS] for the pooler)";
  let description = [{
    ```mlir
    %cls = bert.select_token %h {index = 0 : i64}
        : (tensor<?x?x32xf32>) -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, I64Attr:$index);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_MeanTokensOp : Bert_ForwardOp<"mean_tokens", [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "each row's mean over its real tokens (mask 1), as mean pooling";
  let description = [{
    `result[b, :]` = sum over `s` of `mask[b, s]` * `input[b, s, :]`, over the count of
    tokens with `mask` 1 (a row without any gives zeros). Padding takes no part, so what a
    row gives does not depend on the length it is padded to.

    ```mlir
    %pooled = bert.mean_tokens %h, %mask
        : (tensor<?x?x32xf32>, tensor<?x?xi32>) -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, Bert_IntTensor:$mask);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_MaxTokensOp : Bert_ForwardOp<"max_tokens", [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "each row's maximum over its real tokens (mask 1), as max pooling";
  let description = [{
    `result[b, h]` = the largest `input[b, s, h]` over the tokens with `mask[b, s]` 1 (a
    NaN among them gives NaN; a row without any gives zeros). Padding takes no part.

    ```mlir
    %pooled = bert.max_tokens %h, %mask
        : (tensor<?x?x32xf32>, tensor<?x?xi32>) -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, Bert_IntTensor:$mask);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_FlattenOp : Bert_ForwardOp<"flatten", [Bert_StorageTyped]> {
  let summary = "[batch, seq, features] -> [batch, max_seq * features], zero-padded";
  let description = [{
    Each row's tokens laid end to end. The result's width is fixed by the longest
    sequence the plan allows (`bert.max_seq`), so a batch of shorter rows is padded with
    zeros: the same weights apply whatever the batch's length.

    ```mlir
    %f = bert.flatten %h : (tensor<?x?x32xf32>) -> tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_ConcatOp : Bert_ForwardOp<"concat", [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "the inputs side by side along the last dimension";
  let description = [{
    Two or more inputs of one element type and the same leading dimensions; the result's
    last dimension is the sum of theirs, the first input's features first.

    ```mlir
    %both = bert.concat %cls, %mean
        : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Variadic<Bert_FloatTensor>:$inputs);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_SliceOp : Bert_ForwardOp<"slice", [Bert_StorageTyped]> {
  let summary = "features [start, start + width) of the last dimension";
  let description = [{
    The result's last dimension is the width; the leading dimensions are the input's.

    ```mlir
    %part = bert.slice %x {start = 8 : i64} : (tensor<?x64xf32>) -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, I64Attr:$start);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_SelectTokenGradOp : Bert_BackwardOp<"select_token_grad", [Bert_StorageTyped]> {
  let summary = "d x: zero except the selected token, which gets dy";
  let arguments = (ins Bert_FloatTensor:$resultGrad, I64Attr:$index);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_MeanTokensGradOp : Bert_BackwardOp<"mean_tokens_grad",
    [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "d x[b, s, :] = mask[b, s] * dy[b, :] / the row's count of real tokens";
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_IntTensor:$mask);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_MaxTokensGradOp : Bert_BackwardOp<"max_tokens_grad",
    [Bert_StorageTyped], ["estimateKernels"]> {
  let summary = "d x[b, s, h] = dy[b, h] at the first real token holding the maximum, else 0";
  let arguments = (ins Bert_FloatTensor:$resultGrad, Bert_FloatTensor:$input,
                       Bert_IntTensor:$mask);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_FlattenGradOp : Bert_BackwardOp<"flatten_grad", [Bert_StorageTyped]> {
  let summary = "d x: each row's first seq * features gradients, back in [seq, features]";
  let arguments = (ins Bert_FloatTensor:$resultGrad);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_ConcatGradOp : Bert_BackwardOp<"concat_grad", [Bert_StorageTyped]> {
  let summary = "one input's gradient: dy's features [start, start + the input's width)";
  let arguments = (ins Bert_FloatTensor:$resultGrad, I64Attr:$start);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

def Bert_SliceGradOp : Bert_BackwardOp<"slice_grad", [Bert_StorageTyped]> {
  let summary = "d x: dy at features [start, start + dy's width), zeros elsewhere";
  let arguments = (ins Bert_FloatTensor:$resultGrad, I64Attr:$start);
  let results = (outs Bert_FloatTensor:$inputGrad);
}

//===- BertAdapterOps.td - the ops of LoRA adapters ------------*- tablegen -*-===//
//
// What a LoRA adapter adds to a frozen linear layer beside its two small projections
// (which are bert.linear ops without a bias): the scaling of their product; and the
// dequantization of a QLoRA base's frozen weight for the GEMM that reads it. Included by
// BertOps.td after the op classes.
//
//===----------------------------------------------------------------------===//

def Bert_ScaleOp : Bert_ForwardOp<"scale",
    [Bert_StorageTyped, SameOperandsAndResultType, Bert_InPlaceOpInterface]> {
  let summary = "a tensor times a constant (a LoRA adapter's alpha / r)";
  let description = [{
    y = x * factor, computed in fp32 and rounded once to the storage type, as PyTorch
    multiplies a tensor by a Python float (PEFT's `lora_B(lora_A(x)) * scaling`). Its
    gradient is the result gradient scaled by the same factor. The result may take over
    the input's bytes.

    ```mlir
    %y = bert.scale %x {factor = 2.0 : f32} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input, F32Attr:$factor);
  let results = (outs Bert_FloatTensor:$result);
}

def Bert_DequantizeOp : Bert_Op<"dequantize",
    [Pure, Bert_StorageTyped, DeclareOpInterfaceMethods<Bert_CostOpInterface>]> {
  let summary = "a quantized frozen weight's values, for the one GEMM that reads them";
  let description = [{
    The values of a quantized `bert.param` (`weight` is its `quantized` attribute),
    each rounded once to the result's type, as bitsandbytes' dequantize_4bit and its
    8-bit matmuls' weight dequantization compute them
    (runtime/include/bertc/runtime/quantized_weight.h). The result is a transient the
    plan places like an activation: `-bertc-dequantize-at-use` gives every reader its
    own, so none lives from the forward to the backward. No gradient flows back.

    ```mlir
    %w = bert.dequantize %q {weight = #bert.quantized<nf4, [96, 64]>}
        : (tensor<3472xi8>) -> tensor<96x64xbf16>
    ```
  }];
  let arguments = (ins Bert_QuantizedBytes:$input, Bert_QuantizedWeightAttr:$weight);
  let results = (outs Bert_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===- BertAdapterOps.td - the ops of LoRA adapters ------------*- tablegen -*-===//
//
// What a LoRA adapter adds to a frozen linear layer beside its two small projections
// (which are bert.linear ops without a bias): the scaling of their product. Included by
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

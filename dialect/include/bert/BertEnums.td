//===- BertEnums.td - the bert dialect's enumerations -------*- tablegen -*-===//
//
// Choices an op carries as an attribute of the dialect (`#bert.gelu_approximation<tanh>`).
// Included by BertAttributes.td, which generates their attribute classes, and by BertOps.td,
// whose ops take them.
//
//===----------------------------------------------------------------------===//

#ifndef BERT_ENUMS
#define BERT_ENUMS

include "mlir/IR/EnumAttr.td"
include "bert/BertDialect.td"

def Bert_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how a GELU computes the normal CDF (torch.nn.functional.gelu's `approximate`)", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Tanh", 1, "tanh">
    ]> {
  let cppNamespace = "::mlir::bert";
  let genSpecializedAttr = 0;
}

def Bert_GeluApproximationAttr : EnumAttr<Bert_Dialect, Bert_GeluApproximation,
                                          "gelu_approximation"> {
  let description = [{
    `none`: the exact GELU, x Φ(x) with Φ from erf (BERT's `gelu`). `tanh`:
    0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x^3))) (GPT-2's; Hugging Face's `gelu_new` and
    `gelu_pytorch_tanh`).

    ```mlir
    %y = bert.gelu %x {approximate = #bert.gelu_approximation<tanh>}
        : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

/// The `approximate` attribute of the GELU ops: exact unless it says `tanh`, and printed only
/// then.
def Bert_GeluApproximateArg
    : DefaultValuedAttr<Bert_GeluApproximationAttr, "::mlir::bert::GeluApproximation::None">;

def Bert_WeightFormat : I32EnumAttr<"WeightFormat",
    "how a frozen weight stored quantized is held (bitsandbytes' formats)", [
      I32EnumAttrCase<"Nf4", 0, "nf4">,
      I32EnumAttrCase<"Nf4DoubleQuant", 1, "nf4_double_quant">,
      I32EnumAttrCase<"Int8Rows", 2, "int8_rows">
    ]> {
  let cppNamespace = "::mlir::bert";
  let genSpecializedAttr = 0;
}

#endif // BERT_ENUMS

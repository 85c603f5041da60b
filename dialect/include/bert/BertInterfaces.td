//===- BertInterfaces.td - op interfaces of the bert dialect -*- tablegen -*-===//

#ifndef BERT_INTERFACES
#define BERT_INTERFACES

include "mlir/IR/OpBase.td"

def Bert_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::bert";
  let description = [{
    An op that knows its own vector-Jacobian product. The autodiff pass is a generic
    driver over this interface: it walks the forward ops in reverse, sums the
    gradients reaching each result, and asks the op for the gradients of its operands.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds ops at the builder's insertion point that compute the gradients of this
        op's operands. `resultGrads` has one entry per result (a null Value where no
        gradient reaches it; at least one is non-null). `needed[i]` says whether operand
        i needs a gradient. Returns one entry per operand: a Value where needed, a null
        Value elsewhere.
      }],
      "::llvm::SmallVector<::mlir::Value>", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$resultGrads,
           "::llvm::ArrayRef<bool>":$needed)>
  ];
}

#endif // BERT_INTERFACES

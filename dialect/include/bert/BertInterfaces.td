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

def Bert_InPlaceOpInterface : OpInterface<"InPlaceOpInterface"> {
  let cppNamespace = "::mlir::bert";
  let description = [{
    An op whose kernel may write its (first) result over one of its operands: it
    reads each element before writing the element at the same index, and the operand
    has the result's type. The memory planner lets the result take over the operand's
    bytes when the operand dies at this op.
  }];
  let methods = [
    InterfaceMethod<"The operands whose bytes the result may take over.",
      "::llvm::SmallVector<unsigned>", "getReusableOperands", (ins),
      /*methodBody=*/"", /*defaultImplementation=*/"return {0};">
  ];
}

def Bert_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::bert";
  let description = [{
    What an op costs at a batch of `batch` rows of `seq` tokens on a target: the kernel
    launches that target's runtime makes for it, each with its arithmetic, the unit that
    runs it (a GEMM library, or bertc's own kernels on CUDA cores or a CPU core) and the
    bytes it moves (bert/KernelWork.h). Estimates of step time (a roofline per device) and
    of what a recomputation costs are built from these. The rules follow the kernels the
    code generator emits; where a kernel changes, its op's rule changes with it.
  }];
  let methods = [
    InterfaceMethod<[{
        The kernels `target` launches for this op. The default is one elementwise kernel
        of bertc's own: one flop per result element, each operand and result read or
        written once.
      }],
      "::llvm::SmallVector<::mlir::bert::KernelWork, 1>", "estimateKernels",
      (ins "int64_t":$batch, "int64_t":$seq, "::mlir::bert::CostTarget":$target),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return {::mlir::bert::elementwiseKernel($_op.getOperation(), batch, seq)};
      }]>
  ];
}

#endif // BERT_INTERFACES

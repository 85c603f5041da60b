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

def Bert_StorageTypedOpInterface : OpInterface<"StorageTypedOpInterface"> {
  let cppNamespace = "::mlir::bert";
  let description = [{
    An op whose kernels are templated on the storage type (f32, bf16, f16).
    `-bertc-mixed-precision` gives its float operands and results the 16-bit storage type,
    except where the methods below keep fp32; an op without this interface computes in
    fp32, with casts around it.
  }];
  let methods = [
    InterfaceMethod<[{
        Whether result `index` stays fp32 whatever the storage type: a parameter's gradient
        (accumulated over micro-batches, rounded as little as possible) or statistics the
        backward exponentiates.
      }],
      "bool", "keepsF32Result", (ins "unsigned":$index),
      /*methodBody=*/"", /*defaultImplementation=*/"return false;">,
    InterfaceMethod<[{
        Whether operand `index` is read in its own type, never cast: an fp32 statistic, or
        a gradient added into an fp32 slot.
      }],
      "bool", "readsOperandAsIs", (ins "unsigned":$index),
      /*methodBody=*/"", /*defaultImplementation=*/"return false;">,
    InterfaceMethod<[{
        Whether this instance computes in fp32 although the storage type is 16-bit (an
        `add` of two fp32 gradients of a parameter used twice).
      }],
      "bool", "computesInF32", (ins),
      /*methodBody=*/"", /*defaultImplementation=*/"return false;">
  ];
}

// The StorageTypedOpInterface in an op's traits: plain, or defining the listed methods.
defvar Bert_StorageTyped = Bert_StorageTypedOpInterface;
class Bert_StorageTypedWith<list<string> methods>
    : DeclareOpInterfaceMethods<Bert_StorageTypedOpInterface, methods>;

def Bert_SlotAccumulableOpInterface : OpInterface<"SlotAccumulableOpInterface"> {
  let cppNamespace = "::mlir::bert";
  let description = [{
    A parameter-gradient op with a variant that adds its result straight into the
    parameter's gradient slot (`-bertc-accumulate-in-gemm`): a GEMM with beta = 1, a column
    sum or a scatter added in place, with no tensor for the gradient.
  }];
  let methods = [
    InterfaceMethod<[{
        Creates, at the builder's insertion point, the op that adds this op's result into
        `param`'s gradient slot. The caller erases this op and the accumulation it replaces.
      }],
      "::mlir::Operation *", "buildSlotAccumulation",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Value":$param)>
  ];
}
defvar Bert_SlotAccumulable = DeclareOpInterfaceMethods<Bert_SlotAccumulableOpInterface>;

#endif // BERT_INTERFACES

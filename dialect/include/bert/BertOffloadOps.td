//===- BertOffloadOps.td - activations kept in host memory -----*- tablegen -*-===//
//
// A forward tensor the backward reads can wait in host memory instead of on the device:
// copied down after its last forward reader, copied back up before its first backward
// reader (-bertc-rematerialize's offload-checkpoints). The host copy is a value the plan
// places in the host-resident end of the arena (`#bert.plan`'s host_activations), so the
// liveness, the packing and the checks see one device tensor die and another begin.
// Included by BertOps.td after the op classes.
//
//===----------------------------------------------------------------------===//

def Bert_OffloadOp : Bert_Op<"offload",
    [Pure, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "a device tensor copied to host memory";
  let description = [{
    The result is a copy of `input` in host memory (pinned on a GPU): its offset lies in
    the plan's host_activations region, not in the device arena. Its only readers are
    `bert.reload` ops. The copy moves the tensor's bytes over the host link once.

    ```mlir
    %h = bert.offload %x : (tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input);
  let results = (outs Bert_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Bert_ReloadOp : Bert_Op<"reload",
    [Pure, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<Bert_CostOpInterface, ["estimateKernels"]>]> {
  let summary = "a tensor offloaded to host memory, copied back to the device";
  let description = [{
    The result is a device tensor with the bits `bert.offload` copied down; the backward
    reads it where it would have read the offloaded tensor.

    ```mlir
    %y = bert.reload %h : (tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
    ```
  }];
  let arguments = (ins Bert_FloatTensor:$input);
  let results = (outs Bert_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

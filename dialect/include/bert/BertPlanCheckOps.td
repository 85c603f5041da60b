//===- BertPlanCheckOps.td - plan-check instrumentation ----*- tablegen -*-===//
//
// The ops -bertc-instrument-plan-checks puts around a step's ops so that a trainer built
// with them (bertc --plan-check) can check the memory plan as it runs: a shadow of the
// arena records which tensor owns each byte. Included by BertOps.td after the op classes.
// Each reads and writes that shadow, which is all they touch.
//
//===----------------------------------------------------------------------===//

def Bert_PlanCheckReadOp : Bert_Op<"plan_check_read", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "checks that a tensor's bytes still hold it before they are read";
  let description = [{
    Placed before an op that reads the tensor; `reader` names the reader in the message
    that stops the run when any of the tensor's bytes died or another tensor took them.

    ```mlir
    bert.plan_check_read %h for "bert.gelu" : tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tensor, StrAttr:$reader);
  let assemblyFormat = "$tensor `for` $reader attr-dict `:` type($tensor)";
}

def Bert_PlanCheckDefineOp : Bert_Op<"plan_check_define", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "records that a tensor now owns its bytes";
  let description = [{
    Placed after the op that defines the tensor.

    ```mlir
    bert.plan_check_define %g : tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tensor);
  let assemblyFormat = "$tensor attr-dict `:` type($tensor)";
}

def Bert_PlanCheckReleaseOp : Bert_Op<"plan_check_release",
                                      [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "records that a tensor died: its bytes are poisoned and owned by nobody";
  let description = [{
    Placed after the tensor's last reader (after its definer when nothing reads it).

    ```mlir
    bert.plan_check_release %h : tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tensor);
  let assemblyFormat = "$tensor attr-dict `:` type($tensor)";
}

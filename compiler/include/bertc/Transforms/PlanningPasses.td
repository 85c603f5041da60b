//===- PlanningPasses.td - the passes that plan the step's memory -*- tablegen -*-===//
//
// The planning tail (Pipeline.cpp's addPlanningPasses, which Rematerialize's trial plans run
// too): the schedule, the fusions that change what lives when, the arena plan and its
// independent check. Included by Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef BERTC_TRANSFORMS_PLANNING_PASSES
#define BERTC_TRANSFORMS_PLANNING_PASSES

include "mlir/Pass/PassBase.td"

def ScheduleForMemory : Pass<"bertc-schedule-for-memory", "mlir::ModuleOp"> {
  let summary = "Reorders @micro_step so that fewer activation bytes are live at once";
  let description = [{
    The ops of `@micro_step` are a dataflow graph; any topological order computes the
    same step (dropout masks are keyed by stream, not by position), but the order
    decides how long each tensor stays live, and so the arena's peak. The autodiff
    pass, for one, emits every `accumulate_grad` at the end, which keeps each weight
    gradient live from its producer to there.

    Greedy list scheduling: repeatedly take, among the ops whose operands are all
    computed (and, for an op with side effects, after the previous such op; each
    `accumulate_grad` writes its own gradient slot, so those commute), the one
    that frees the most activation bytes net of those it allocates; ties go to the
    earlier op of the current order. A gradient read only by its `accumulate_grad`
    counts as no allocation: `-bertc-accumulate-in-gemm` writes it straight into its
    slot (or the fused update reads it at once), and priced it would postpone every
    weight-gradient GEMM, and the activations it reads, to the end. The new order is kept only when its peak of live
    bytes (in-place chains counted once, as the planner counts them) is lower than the
    current one, so the pass never makes a plan worse.
  }];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

def FuseOptimizer : Pass<"bertc-fuse-optimizer", "mlir::ModuleOp"> {
  let summary = "Runs each AdamW update in the backward, as soon as its gradient is complete";
  let description = [{
    With one micro-step per optimizer step there is nothing to accumulate: each
    parameter's gradient is final when the backward has computed it. This pass moves
    every `bert.adamw` of `@optimizer_step` into `@micro_step`, where it replaces the
    parameter's `bert.accumulate_grad` and takes the gradient as an operand, placed
    after both the gradient and the last other reader of the parameter (the update
    rewrites it). The gradient is then an ordinary temporary that dies at its update:
    no whole-model gradient region is planned (the LOMO / fused-optimizer layout), and
    the update is the same arithmetic on the same values, so training is bit for bit
    the unfused step's. `@optimizer_step` is left empty.

    It needs what makes an early update equal to the late one, and fails with a
    diagnostic otherwise: one micro-step per optimizer step (`batch` at most the
    micro-batch), no gradient clipping (`max_grad_norm = 0`: clipping scales by the
    norm of every gradient), and no fp16 loss scaling (an overflow anywhere skips the
    whole update). It runs after `-bertc-schedule-for-memory`, whose order it keeps,
    and before `-bertc-plan-buffers`.
  }];
  let dependentDialects = ["mlir::bert::BertDialect", "mlir::func::FuncDialect"];
}

def AccumulateInGemm : Pass<"bertc-accumulate-in-gemm", "mlir::ModuleOp"> {
  let summary = "Writes parameter gradients straight into their slots";
  let description = [{
    The autodiff pass computes a linear weight's gradient dy^T x as a tensor and
    `bert.accumulate_grad` adds it to the parameter's gradient slot: a temporary of
    the weight's size and a second pass over it. Where that accumulation is the
    gradient's only reader, this pass replaces the pair with one
    `bert.accumulate_linear_grad_weight`, the GEMM with beta = 1 whose output is the
    slot (the runtime zeroes the slots before an optimizer step's first micro-batch),
    at the place of the gradient's GEMM, so the order of everything else stays. A
    bias's gradient (`bert.bias_grad`, a column sum) and its accumulation likewise
    become one `bert.accumulate_bias_grad`, whose last pass adds into the slot: one
    launch fewer per bias; where the gradient it sums is what a `bert.gelu_grad` or a
    `bert.dropout_grad` writes, the two become one `bert.gelu_grad_accumulate_bias` or
    `bert.dropout_grad_accumulate_bias`, whose CUDA kernel sums what it writes, so the
    gradient is not read again. A `bert.bias_grad` no slot accumulates (an update in the
    backward reads it) joins such a backward likewise, as its second result
    (`bert.gelu_grad_bias`, `bert.dropout_grad_bias`). A `bert.layernorm_grad` whose gamma
    and beta gradients are only accumulated becomes one `bert.accumulate_layernorm_grad`,
    whose column sums add into both slots. An embedding table's gradient
    (`bert.embedding_grad`, a scatter-add into a zeroed table) and its accumulation
    become one `bert.accumulate_embedding_grad`, the scatter-add into the slot: no
    temporary of the table's size in fp32 and no zeroing of it. An activation's gradient
    summed from a `bert.linear_grad_input` and another gradient (a residual's, another
    projection's) becomes one `bert.linear_grad_input_add`, the GEMM with the other
    gradient as C and beta = 1, where that GEMM has no other reader and the other gradient
    exists before it. An LM head loss's weight gradient (`bert.lm_head_loss_grad`) and
    its accumulation become one `bert.accumulate_lm_head_loss_grad`, whose per-chunk
    weight GEMMs add into the slot. A parameter read twice (tied embeddings: the table
    and the LM head) has the sum of its gradients accumulated; that sum is split first
    into one accumulation per gradient, each of which then folds as above, so neither
    the gradients nor their sum exist as [vocab, hidden] fp32 tensors.

    It runs after `-bertc-schedule-for-memory` and `-bertc-fuse-optimizer` (an update
    in the backward reads the gradient itself, so nothing is accumulated there) and
    before `-bertc-plan-buffers`, which then plans no temporary for the gradient.
  }];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

def DequantizeAtUse : Pass<"bertc-dequantize-at-use", "mlir::ModuleOp"> {
  let summary = "Gives every reader of a dequantized weight its own dequantization";
  let description = [{
    A QLoRA base weight is stored quantized and read through `bert.dequantize`, whose
    16-bit result is as large as the weight in 16 bits. Kept from the forward's GEMM to
    the backward's, every layer's would be live at once, which is what quantizing the
    base saves. So each `bert.dequantize` with more than one reader is cloned right
    before each reader but the first: every result has one reader, and lives from its
    dequantization to that GEMM. What it costs is a dequantization per backward GEMM
    that reads the weight, which the step estimate prices.

    It runs after `-bertc-autodiff` (the backward's readers exist) and again before
    planning (a recomputation may have cloned a reader).
  }];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

def FuseAddLayerNorm : Pass<"bertc-fuse-add-layernorm", "mlir::ModuleOp"> {
  let summary = "Runs each residual add and the LayerNorm right after it as one op";
  let description = [{
    A post-LN transformer normalises each residual sum: `bert.add` then `bert.layernorm`
    of its result. Where the schedule runs the LayerNorm right after the add, this pass
    replaces the pair with one `bert.add_layernorm`, which writes the sum (the
    backward's input) and the normalised output in one pass over the rows: one launch
    and one read of the sum fewer. The sum may still take over an addend's bytes. Only
    adjacent pairs are fused, so lifetimes move by at most that one step: an addend that
    died at the add lives to the fused op, whose sum and output are both born there
    (in BERT's residual adds the addend that dies is the one whose bytes the sum takes).

    A `bert.dropout` right before the add whose result only the add reads is folded in
    too (the op's `dropout` and `stream`): the dropout's output is never written, so a
    launch and a write and a read of that tensor go. Its backward is unchanged (the mask
    is regenerated from the stream).

    It runs after `-bertc-schedule-for-memory`, whose order it keeps, and before
    `-bertc-plan-buffers`.
  }];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

def PlanBuffers : Pass<"bertc-plan-buffers", "mlir::ModuleOp"> {
  let summary = "Assigns every tensor a static offset in one arena";
  let description = [{
    Lays out one arena for the whole trainer:
      [parameters | master weights | gradients | optimizer state | scratch | inputs |
       activations | gemm workspace]
    Parameters (in their storage type), the fp32 master copies of 16-bit parameters,
    the fp32 gradients and the fp32 AdamW moments are each one contiguous region in
    program order (the optimizer and checkpoint I/O walk them linearly). Every other
    tensor of `@micro_step` is sized at its upper bound (the first dynamic dimension
    is `bert.max_batch`, the second `bert.max_seq`) and gets an offset from liveness
    over the program order: two tensors share bytes only when their live intervals
    [definition, last use] are disjoint. Placement is greedy by size: the largest
    tensors are placed first, each at the lowest aligned offset that does not overlap
    a placed tensor whose interval intersects its own.

    Scratch holds, with `target` cpu, the CPU fused attention's tiles ([seq, seq] scores,
    which no CUDA kernel reads, so target cuda reserves none), and one slot the CUDA
    kernels' per-op workspace (LayerNorm row statistics, the attention backward's row
    term) shares: every op that needs it gets its offset as `bert.workspace`. Both targets
    plan that slot. The CUDA runtime's workspace comes last, so it
    moves no other slot: with `gemm-workspace`
    bytes (the cuBLASLt workspace of target cuda), those and then the optimizer's device
    tables (the AdamW chunk table, the gradient norm's partial sums; abi/kernel_workspace.h),
    together the `gemm_workspace` region.

    Results (bert/Placement.h, verified by the dialect): `bert.offsets` (one byte offset
    per result) on ops; on parameters `bert.slots`, a `#bert.param_slots` with `value`,
    `master` (16-bit parameters), `grad`, `adam_m`, `adam_v` (with 8-bit state, whose
    `bert.adamw` has `state_block`: the code arrays, one byte per value, and
    `adam_m_absmax`, `adam_v_absmax`, one float per block; the fp32 moments first, then
    each 8-bit state); and the module attribute `bert.plan`: a `#bert.plan` with
    `arena_bytes`, the regions and the loss.

    With `offload-optimizer` (ZeRO-Offload), `@optimizer_step` runs on the host: the
    master weights and the optimizer state, which nothing else reads, move to the
    arena's end, after the CUDA runtime's workspace, as `#bert.plan`'s `host_bytes`
    (host memory; the device holds only what comes before). The module gets the unit
    attribute `bert.optimizer_on_host`, and the device's optimizer tables no AdamW
    chunks. Refused with updates in the backward (-bertc-fuse-optimizer), which run on
    the device.

    With `host-embeddings`, each frozen, unquantized table whose only readers are
    `bert.embedding` gathers (not one an LM head shares) has its value in host memory,
    after the offloaded checkpoints, as `#bert.plan`'s `host_parameters`: a gather reads
    only the batch's rows, which the CUDA kernel reads in place from page-locked, mapped
    host memory.

    The fp32 masters of frozen 16-bit parameters are never read by a step (the forward
    reads their 16-bit working copies; nothing updates them): with `host-frozen-masters`
    (a GPU target) they lie last, in the host-resident end, as `#bert.plan`'s
    `frozen_masters`, for initialisation and checkpoints only; else among the others.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "256",
           "byte alignment of every slot">,
    Option<"target", "target", "std::string", "\"cpu\"",
           "the target whose kernels' scratch the plan holds: cpu or cuda">,
    Option<"gemmWorkspace", "gemm-workspace", "int64_t", "0",
           "bytes of the GEMM library's workspace at the arena's end (0: none)">,
    Option<"offloadOptimizer", "offload-optimizer", "bool", "false",
           "keep the master weights and optimizer state in host memory, where "
           "@optimizer_step runs">,
    Option<"hostFrozenMasters", "host-frozen-masters", "bool", "false",
           "keep the fp32 masters of frozen 16-bit parameters in host memory, after the "
           "device arena (a GPU target; on the CPU the arena is host memory already)">,
    Option<"hostEmbeddings", "host-embeddings", "bool", "false",
           "keep the frozen embedding tables only gathers read in host memory, where the "
           "device's gathers read the batch's rows">,
  ];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

def VerifyBudget : Pass<"bertc-verify-budget", "mlir::ModuleOp"> {
  let summary = "Checks a memory plan by a path independent of the planner";
  let description = [{
    Re-derives, from the planned IR alone, what `-bertc-plan-buffers` promises, without
    its liveness or packing code, so that a bug in the planner cannot certify itself:
      1. the regions of `bert.plan` (parameters, master weights, gradients, optimizer
         state, scratch, inputs, activations, gemm workspace, frozen masters) lie inside `arena_bytes`
         and are pairwise disjoint;
      2. every slot (each result's `bert.offsets`, a parameter's `bert.slots`: its value,
         its master (fp32, for a 16-bit parameter), gradient and AdamW moments (one byte
         per value with 8-bit state, whose absmaxes take a float per block), the
         `bert.workspace` every attention and LayerNorm op needs,
         alive at its own step) lies inside the arena and inside its region; `@optimizer_step` updates the slots `@micro_step` uses, and the
         plan's `loss` is the slot of the value `@micro_step` returns;
      3. no two slots alive at a common step of `@micro_step` share a byte: a result
         lives from its defining op to its last user (the returned loss to the end), a
         parameter or input slot for the whole step. A sweep over program order keeps
         the live slots sorted by offset, so each new slot is checked against its two
         neighbours only;
      4. with `budget` > 0, the device arena (`arena_bytes` less `host_bytes`) is at
         most `budget`; with the optimizer on the host (`bert.optimizer_on_host`), no
         update runs in `@micro_step`.
    A violation is an error at the op that owns the slot (with a note at the op it
    collides with), or at the module for the regions and the budget. A plan that
    passes is unchanged.
  }];
  let options = [
    Option<"budget", "budget", "int64_t", "0",
           "bytes the arena may take at most (0: no budget check)">,
  ];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

#endif // BERTC_TRANSFORMS_PLANNING_PASSES

//===- Passes.td - bertc's passes --------------------------*- tablegen -*-===//
//
// Each pass description is a design note: what it establishes and why.
//
//===----------------------------------------------------------------------===//

#ifndef BERTC_TRANSFORMS_PASSES
#define BERTC_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def Autodiff : Pass<"bertc-autodiff", "mlir::ModuleOp"> {
  let summary = "Appends the backward pass to @micro_step";
  let description = [{
    Turns the forward graph of `@micro_step` (which returns the scalar loss) into a
    whole micro-step: forward, loss, backward, and one `bert.accumulate_grad` per
    trainable parameter that receives a gradient.

    It is a generic driver over `GradientOpInterface`: it knows no op. It
    1. marks the values that depend on a trainable parameter (only those need
       gradients, so a frozen embedding table costs no backward at all);
    2. seeds d loss / d loss = 1 and walks the forward ops in reverse, asking each op
       whose results received a gradient for the gradients of its needed operands;
    3. sums the gradients reaching a value used more than once with `bert.add`
       (residual connections), at the forward op's location;
    4. accumulates each parameter's gradient into its gradient slot.
    Backward ops carry the location of the forward op they differentiate, so every
    byte of the backward traces back to a TOML line.
  }];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

def InsertOptimizer : Pass<"bertc-insert-optimizer", "mlir::ModuleOp"> {
  let summary = "Adds @optimizer_step: one AdamW update per trainable parameter";
  let description = [{
    Creates `@optimizer_step` with a `bert.adamw` for every trainable parameter of
    `@micro_step`, in the same order, with the module's `bert.train` settings
    (beta1, beta2, adam_eps, weight_decay). As the Hugging Face Trainer does, biases
    and LayerNorm weights (`decay = false`) get no weight decay. Frozen parameters get
    no update and, later, no optimizer state. The step functions stay separate so that
    several micro-steps (gradient accumulation) can feed one update.

    With `optimizer-state=8bit`, each update of a parameter of at least 4096 values
    (bitsandbytes' min_8bit_size, kMin8bitStateValues) gets `state_block = 2048`: its
    moments are kept 8-bit, blockwise (abi/adamw_8bit_state.h), a quarter of the fp32
    bytes. Smaller parameters keep fp32 moments, where the absmaxes would weigh most
    and the saving is small, and so do embedding tables (the tables of `bert.embedding`),
    whose rows see sparse, rare-token gradients that 8-bit moments track poorly: bitsandbytes
    keeps them 32-bit too (StableEmbedding, or `optim_bits=32` for embedding layers).
  }];
  let options = [
    Option<"optimizerState", "optimizer-state", "std::string", "\"fp32\"",
           "AdamW moments of the larger parameters: fp32 or 8bit">,
  ];
  let dependentDialects = ["mlir::bert::BertDialect", "mlir::func::FuncDialect"];
}

def MixedPrecision : Pass<"bertc-mixed-precision", "mlir::ModuleOp"> {
  let summary = "Stores parameters and activations in bf16 or fp16; computes in fp32";
  let description = [{
    The HF/apex-O2 layout, decided once in the IR so that the plan counts its bytes:
      - every `bert.param` becomes a 16-bit working copy (the parameters region) that
        the forward and backward read; `-bertc-plan-buffers` gives each one an fp32
        master copy (the master_weights region) that AdamW updates before rewriting the
        working copy, so checkpoints stay exact fp32;
      - weight gradients (`linear_grad_weight`, `bias_grad`, `embedding_grad`, the
        gamma and beta gradients of `layernorm_grad`) stay fp32 and accumulate into
        fp32 gradient slots; the AdamW moments stay fp32;
      - attention's softmax statistics (the `lse` result of `bert.attention`, which
        `attention_grad` reads) stay fp32;
      - every other float tensor of `@micro_step` is 16-bit: ops with 16-bit kernels
        load it, compute in fp32 (GEMM accumulation, LayerNorm statistics, softmax)
        and round once when they store.
    The pass knows no op: an op's `StorageTypedOpInterface` says that it has 16-bit
    kernels and which of its operands and results stay as they are or fp32.
    Ops without a 16-bit kernel (the loss, and any op without the interface) keep
    running in fp32: their 16-bit operands are cast to f32
    with `bert.cast`, and a 16-bit op reading an f32 result gets a cast back. Casts of
    one value to one type are shared by all its readers.
    With fp16, the backward's seed (`bert.fill`) gets `loss_scaled`: the runtime
    multiplies it by a dynamic loss scale, checks the gradients for inf/NaN before
    the optimizer step, and skips the step and halves the scale on overflow.
    The module records the choice as `bert.precision`; with `precision=fp32` that is
    all the pass does.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16\"",
           "storage precision: fp32, bf16 or fp16">,
  ];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

def LowerToTarget : Pass<"bertc-lower-to-target", "mlir::ModuleOp"> {
  let summary = "Records in the IR which kernels a target runs where they differ";
  let description = [{
    The targets' kernels compute the same tensors but not always the same way, and
    where the way changes what a step costs, the IR says which it is, so that the cost
    model and the code generator read one choice instead of each deciding from the
    target: with `tf32` (target=cuda only, `bertc --tf32`), `bert.linear` and its
    gradient ops with fp32 operands get `tf32`: cuBLASLt runs them with
    CUBLAS_COMPUTE_32F_FAST_TF32 (operands rounded to TF32 on tensor cores, fp32
    accumulation), priced at the TF32 rate. Without it the mark is removed. 16-bit GEMMs
    are never marked, so with bf16 or fp16 storage the option changes nothing. The
    memory plan does not depend on it: both targets plan the same kernel workspace
    (`-bertc-plan-buffers`), so that they run the same schedule at the same offsets.

    `attention-head-chunk` n sets every `bert.attention` and `bert.attention_grad`'s
    `head_chunk` to min(n, heads): 0 keeps the fused kernels, which never form a
    [seq, seq] matrix; n > 0 runs the products as GEMMs (tensor cores for 16-bit storage
    on CUDA) n heads at a time, with [n, batch, seq, seq] score blocks in the kernel
    workspace. With grouped-query heads the chunk is rounded down to whole groups of
    heads / kv_heads (at least one), so that a chunk's GEMMs read each key/value head
    for all its query heads and its backward sums their dk and dv in one place. Both
    targets run the same structure, so the plan is the same for both.
    With `tf32`, fp32 attention with n > 0 gets `tf32` too: its GEMMs round their
    operands to TF32 (the fused kernels have no GEMMs and are never marked).

    `lm-head-token-chunk` n sets every `bert.lm_head_loss` and gradient's `token_chunk`:
    the tokens (micro-batch x sequence, flattened) its kernels take at a time, whose
    [token_chunk, vocab] fp32 logits block is its kernel workspace. n > 0 pins it (at
    most the plan's tokens); 0 takes the default: the largest power of two whose block is
    at most 256 MiB (kLmHeadDefaultBlockBytes), never above the plan's tokens. Both targets
    run the same chunks, so the plan is the same for both.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"cpu\"",
           "whose kernels the step runs: cpu or cuda">,
    Option<"tf32", "tf32", "bool", "false",
           "run the fp32 GEMMs with TF32 tensor cores (target=cuda)">,
    Option<"attentionHeadChunk", "attention-head-chunk", "int64_t", "0",
           "heads the attention's GEMMs take at a time (0: the fused kernels)">,
    Option<"lmHeadTokenChunk", "lm-head-token-chunk", "int64_t", "0",
           "tokens the LM head loss takes at a time (0: the default bound)">,
  ];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

def Rematerialize : Pass<"bertc-rematerialize", "mlir::ModuleOp"> {
  let summary = "Recomputes activations in the backward to meet an arena budget";
  let description = [{
    Chooses which forward tensors of `@micro_step` the backward recomputes instead of
    keeping, so that the planned arena fits `arena-budget` bytes at the least
    estimated recompute time (each op's CostOpInterface on a roofline).
      1. If the step as it is plans within the budget, nothing changes.
      2. The step is read as a chain of blocks (bertc/Analysis/RematChain.h); the
         solver (RematSolver.h) finds the cheapest keep set whose modelled peak fits
         the budget less the fixed regions, exactly, block by block and across blocks.
      3. The choice is checked with the real planner (schedule-for-memory, then
         fuse-optimizer when the final plan has it, accumulate-in-gemm and
         plan-buffers on a copy, with the final plan's GEMM workspace and optimizer
         placement, so that the (device) arena compared with the budget is the one
         the step will have; the model's
         budget is what the regions around the activations leave). Packing and
         scheduling differ from the model, so
         while the arena is over budget, the model's budget is lowered by the excess
         and the solver runs again.
      4. When no keep set fits, the one of lowest modelled peak is applied (the
         driver then reports the plan over budget).
    Each recomputed op is cloned, attributes and all, just before its first reader in
    the backward, and the backward reads the clone, so the forward tensor dies at its
    last forward reader. A dropout clone keeps its `stream`: its mask is a function of
    (seed, step, stream, element), the same as the forward's. The module records the
    clones as `bert.recompute` (op, tensor name, TOML origin, FLOPs per micro-step).
  }];
  let options = [
    Option<"arenaBudget", "arena-budget", "int64_t", "0",
           "bytes the planned arena may take (0: keep every activation)">,
    Option<"arch", "arch", "std::string", "\"\"",
           "GPU generation whose speeds price a recomputation (empty: the CPU)">,
    Option<"gemmWorkspace", "gemm-workspace", "int64_t", "0",
           "plan-buffers' gemm-workspace of the final plan, which the trial plans hold "
           "too, so that they measure the arena the budget is for">,
    Option<"fuseOptimizer", "fuse-optimizer", "bool", "false",
           "whether the final plan runs the updates in the backward "
           "(-bertc-fuse-optimizer), which the trial plans then do too">,
    Option<"offloadOptimizer", "offload-optimizer", "bool", "false",
           "whether the final plan keeps the optimizer in host memory (plan-buffers' "
           "offload-optimizer), which the trial plans then do too: the budget is the "
           "device arena's">,
    Option<"hostFrozenMasters", "host-frozen-masters", "bool", "false",
           "whether the final plan keeps frozen parameters' fp32 masters in host memory "
           "(plan-buffers' host-frozen-masters), which the trial plans then do too">,
  ];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

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

    Scratch holds the CPU attention's tiles and one slot the CUDA kernels' per-op
    workspace (LayerNorm row statistics, the attention backward's row term) shares:
    every op that needs it gets its offset as `bert.workspace`. Both targets plan it,
    so both run at the same offsets. The CUDA runtime's workspace comes last, so it
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

    The fp32 masters of frozen 16-bit parameters are never read by a step (the forward
    reads their 16-bit working copies; nothing updates them): with `host-frozen-masters`
    (a GPU target) they lie last, in the host-resident end, as `#bert.plan`'s
    `frozen_masters`, for initialisation and checkpoints only; else among the others.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "256",
           "byte alignment of every slot">,
    Option<"gemmWorkspace", "gemm-workspace", "int64_t", "0",
           "bytes of the GEMM library's workspace at the arena's end (0: none)">,
    Option<"offloadOptimizer", "offload-optimizer", "bool", "false",
           "keep the master weights and optimizer state in host memory, where "
           "@optimizer_step runs">,
    Option<"hostFrozenMasters", "host-frozen-masters", "bool", "false",
           "keep the fp32 masters of frozen 16-bit parameters in host memory, after the "
           "device arena (a GPU target; on the CPU the arena is host memory already)">,
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

def DeriveEvalStep : Pass<"bertc-derive-eval-step", "mlir::ModuleOp"> {
  let summary = "Adds @eval_step: the planned forward with dropout off";
  let description = [{
    Evaluation runs `@micro_step`'s forward with dropout off. This pass derives it from
    the planned step rather than planning it again: `@eval_step` clones, in program
    order, the ops of `@micro_step` that its returned loss depends on, every attribute
    kept (so their `bert.offsets` and parameter slots are the training step's), sets
    every dropout rate (`bert.dropout`'s and attention's) to 0, and returns the loss and
    the logits (the loss op's first operand), or the loss alone where there are no
    logits (`bert.lm_head_loss`, which never forms them: a causal LM is evaluated by its
    loss).

    Why the offsets stay valid: two tensors share bytes only when their live intervals
    in the step are disjoint; a subset of the ops in the same order only shortens
    intervals, so they stay disjoint, and evaluation never needs more arena than
    training. The pass therefore runs after `-bertc-plan-buffers` (it refuses a module
    without a plan) and replaces an `@eval_step` the module already has, so it can run
    again after the step changes. `@micro_step` must return the result of a loss op
    (`bert.cross_entropy`, `bert.mse_loss` or `bert.lm_head_loss`). The code generators
    emit `@eval_step` as
    the trainer's evalStep.
  }];
  let dependentDialects = ["mlir::bert::BertDialect", "mlir::func::FuncDialect"];
}

def InstrumentPlanChecks : Pass<"bertc-instrument-plan-checks", "mlir::ModuleOp"> {
  let summary = "Records around each op what it reads, defines and releases";
  let description = [{
    A trainer built with plan checks (`bertc --plan-check`) checks the memory plan as it
    runs: a shadow of the arena records which tensor owns each byte, and a read of
    bytes that died or that another tensor took over stops the run, naming the op and
    the tensor. This pass says what to report, so that the code generator only prints
    the IR: in every step function, around each op other than `bert.param` and
    `bert.input` (whose slots live for the whole run),
      1. before it, a `bert.plan_check_read` of each operand in the activation space,
         naming the op;
      2. after it, a `bert.plan_check_define` of each result;
      3. then a `bert.plan_check_release` of each activation whose last user it is
         (each result nothing reads), unless the function returns it (the caller reads
         it after the step) or it is an operand whose bytes a result took over (an
         in-place op: the same arena offset).
    `@eval_step` also reads its logits before it returns: the trainer's evalStep
    copies them out.

    The checks read the plan (`bert.offsets`), so the pass runs last, after
    `-bertc-derive-eval-step`, and only for trainers built with plan checks (the CPU
    target's); the analyses of the plan never see them. A module that already holds
    plan checks is left as it is.
  }];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

#endif // BERTC_TRANSFORMS_PASSES

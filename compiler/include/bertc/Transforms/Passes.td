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

    With `offload-checkpoints`, the step goes through the solver even when it fits as
    it is, and in every block but the last what the backward reads of the forward waits
    in host memory: the block's input (a checkpoint: the one tensor that carries the
    forward from one block to the next; not the first block's, nor one the previous
    block's backward reads) and every tensor the block keeps rather than recomputes. The
    model holds each only while the forward reads it and again from its first backward
    reader on, and prices its copies down and back up (the host link's bytes on a GPU)
    against recomputing it. Where no plan fits that way (host memory within
    `host-budget` included), the blocks' inputs alone wait there, else nothing does. In
    the IR a `bert.offload` follows its definer at once and a
    `bert.reload` precedes its first backward reader (a clone or a backward op), which
    with every later one reads the reloaded tensor.
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
    Option<"hostEmbeddings", "host-embeddings", "bool", "false",
           "whether the final plan keeps frozen embedding tables in host memory "
           "(plan-buffers' host-embeddings), which the trial plans then do too">,
    Option<"offloadCheckpoints", "offload-checkpoints", "bool", "false",
           "whether what each block but the last keeps for its backward, its input "
           "included, waits in host memory between the block's forward and backward">,
    Option<"hostBudget", "host-budget", "int64_t", "0",
           "host memory the plan may take for what it offloads, the optimizer's included "
           "(0: no bound)">,
  ];
  let dependentDialects = ["mlir::bert::BertDialect"];
}

include "bertc/Transforms/PlanningPasses.td"

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

//===- TrainModule.h - what a bertc training module looks like ---*- C++ -*-===//
//
// Accessors for the parts of a training module every pass and the codegen read:
// the two step functions, the `bert.train` settings, the `bert.plan` memory plan and the
// upper bounds of the dynamic (batch, seq) dimensions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "bert/BertDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace bertc {

inline constexpr llvm::StringLiteral kMicroStep = "micro_step";
inline constexpr llvm::StringLiteral kOptimizerStep = "optimizer_step";
inline constexpr llvm::StringLiteral kEvalStep = "eval_step";

/// The module's @micro_step, or a diagnostic on the module and failure.
mlir::FailureOr<mlir::func::FuncOp> getMicroStep(mlir::ModuleOp module);

/// The module's @optimizer_step, or a diagnostic on the module and failure.
mlir::FailureOr<mlir::func::FuncOp> getOptimizerStep(mlir::ModuleOp module);

/// The module's [train] settings (`bert.train`), or a diagnostic on the module and failure.
mlir::FailureOr<mlir::bert::TrainAttr> getTrainSettings(mlir::ModuleOp module);

/// The module's memory plan (`bert.plan`, written by -bertc-plan-buffers), or a diagnostic
/// on the module and failure.
mlir::FailureOr<mlir::bert::PlanAttr> getPlan(mlir::ModuleOp module);
/// The same without a diagnostic: null when the module has not been planned.
mlir::bert::PlanAttr findPlan(mlir::ModuleOp module);

/// Upper bounds of the dynamic dimensions: the first `?` of a tensor is the
/// micro-batch (`bert.max_batch`), the second the sequence (`bert.max_seq`).
struct DimBounds {
  int64_t maxBatch;
  int64_t maxSeq;
};

/// The most bytes one tensor of a plan may take at its bounds (256 TiB). The frontend's
/// limits keep every tensor of a TOML job below it; checking it bounds the plan's int64
/// byte arithmetic for any module.
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// The module's bounds; fails with a diagnostic when they are missing or not positive, or
/// when a tensor would exceed kMaxTensorBytes at them (reported at its op).
mlir::FailureOr<DimBounds> getDimBounds(mlir::ModuleOp module);

/// The shape of `type` with its dynamic dimensions replaced by their bounds.
llvm::SmallVector<int64_t> boundedShape(mlir::RankedTensorType type, DimBounds bounds);

/// Bytes of one element of `type` (f32/i32: 4, bf16/f16: 2).
int64_t elementBytes(mlir::Type type);

/// Bytes `type` takes at its upper-bound shape.
int64_t boundedBytes(mlir::RankedTensorType type, DimBounds bounds);

/// Micro-steps per optimizer step: `bert.train`'s batch over the micro-batch, rounded up
/// (1 for a module without settings).
int64_t accumulationSteps(mlir::ModuleOp module, DimBounds bounds);

/// The trainable parameters of @micro_step, in program order.
llvm::SmallVector<mlir::bert::ParamOp> trainableParams(mlir::func::FuncOp microStep);

/// Whether `name` is a LoRA adapter's parameter ("<layer>.lora_A.weight", "...lora_B.weight").
bool isLoraAdapterParam(llvm::StringRef name);

/// Whether `param` keeps an fp32 master beside its working copy: a 16-bit parameter that
/// trains, or a frozen one that checkpoints save. A LoRA job's (`bert.adapter_config`)
/// frozen base is never saved, so its working copy, 16-bit or quantized, is its only value;
/// its adapters are, those of a frozen group too.
bool keepsFp32Master(mlir::bert::ParamOp param);

/// Whether `param` may lie in host memory with its gathers reading the batch's rows there
/// (-bertc-plan-buffers's host-embeddings): a frozen, unquantized table whose every reader
/// is a `bert.embedding` (no gradient, no tied LM head).
bool isHostEmbeddingTable(mlir::bert::ParamOp param);

/// The `state_block` of every parameter whose `bert.adamw` keeps 8-bit moments, by
/// parameter name; empty without updates.
llvm::StringMap<int64_t> eightBitStateBlocks(mlir::ModuleOp module);

/// The parameters whose `bert.adamw` runs in @micro_step's backward from its gradient
/// operand (-bertc-fuse-optimizer), by name: they have no gradient slot.
llvm::StringSet<> updatesInBackward(mlir::ModuleOp module);
/// The module attribute saying that @optimizer_step runs on the host, from the master
/// weights and optimizer state in host memory (-bertc-plan-buffers's offload-optimizer).
inline constexpr llvm::StringLiteral kOptimizerOnHost = "bert.optimizer_on_host";
/// Whether @optimizer_step runs on the host (kOptimizerOnHost).
bool optimizerOnHost(mlir::ModuleOp module);
/// The module attribute asking for a trainer whose micro-step reports each op to the run's
/// op timer (bertc --time-ops).
inline constexpr llvm::StringLiteral kTimeOps = "bert.time_ops";
/// Marks an op -bertc-rematerialize placed in the backward to recompute an activation.
inline constexpr llvm::StringLiteral kRecomputed = "bert.recomputed";
/// Whether the module asks for a trainer that times its ops (kTimeOps).
bool timesOps(mlir::ModuleOp module);
/// Whether the backward's seed carries the fp16 loss scale (-bertc-mixed-precision).
bool usesLossScaling(mlir::ModuleOp module);
/// Whether an offloaded optimizer's gradients come down during the last micro-step's
/// backward, each as it completes: when no update depends on every gradient (no loss
/// scaling, no clipping).
bool streamsGradients(mlir::ModuleOp module);
/// Host memory a trainer takes for what it offloads: an offloaded optimizer's masters and
/// state, and with `hostCopies` (a CUDA trainer's; a CPU trainer's arena is host memory)
/// the host copies of the gradients and parameters it moves each step; the host copies of
/// offloaded checkpoints; the embedding tables in host memory. 0 when nothing is offloaded.
int64_t offloadHostBytes(mlir::bert::PlanAttr plan, bool hostCopies);
/// The part of offloadHostBytes the trainer page-locks, so that the copies between device
/// and host run asynchronously and the device reads the embedding tables in place: the
/// host copies and the tables (none without `hostCopies`).
int64_t offloadPinnedBytes(mlir::bert::PlanAttr plan, bool hostCopies);
/// Whether the module's GEMMs run in TF32: some linear op or gradient carries `tf32`
/// (-bertc-lower-to-target).
bool hasTf32Gemms(mlir::ModuleOp module);
/// Heads the attention's GEMMs take at a time: the largest head_chunk of the module's
/// bert.attention ops (-bertc-lower-to-target), 0 when they all run fused.
int64_t attentionHeadChunk(mlir::ModuleOp module);
/// Tokens the LM head loss takes at a time: its bert.lm_head_loss's token_chunk
/// (-bertc-lower-to-target), 0 without an LM head.
int64_t lmHeadTokenChunk(mlir::ModuleOp module);

} // namespace bertc

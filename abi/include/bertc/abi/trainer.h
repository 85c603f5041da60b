// The contract between a generated trainer and the runtime. bertc's codegen emits one
// translation unit whose only export is bertc_trainer() (below): the plan of the compiled
// model and its step functions for one target. The runtime supplies main(): flags, data,
// checkpoints, the schedule, logging. Every offset is a byte offset into the single arena
// allocation. Both sides are built from this header; kTrainerAbiVersion changes with it, and
// the runtime refuses a trainer built against another version.
#pragma once

#include "bertc/abi/kernel_workspace.h"

#include <cstddef>
#include <cstdint>

namespace bertc {

class PlanChecker;

/// Times the ops of a trainer built with `bertc --time-ops` (TrainerPlan::timesOps): its
/// micro-step calls begin with the op's name ("bert.linear") before the op's kernels and
/// end after them; the driver times its own parts of a step the same way, under the names
/// below.
class OpTimer {
public:
  virtual void begin(const char *op) = 0;
  virtual void end() = 0;

protected:
  ~OpTimer() = default;
};

/// The driver's zeroing of the gradient region before a step's first micro-batch, under the
/// name the step estimate (plan.json's step_time) gives it too.
inline constexpr const char *kTimedGradientZeroing = "gradient zeroing";
/// The driver's optimizer step: loss unscaling, clipping and AdamW, timed whole.
inline constexpr const char *kTimedOptimizerStep = "optimizer step";

/// How a parameter is initialised when no checkpoint provides it (Hugging Face's
/// _init_weights: normal(0, initializer_range) for matrices and embeddings, LayerNorm
/// weight 1, biases and LayerNorm bias 0; a LoRA adapter's lora_A as PEFT's
/// kaiming_uniform_(a = sqrt(5)): uniform(-1 / sqrt(in), 1 / sqrt(in)) for [out, in]).
enum class ParamInit : uint8_t { Normal, Zeros, Ones, KaimingUniform };

/// How a parameter's working copy is stored: fp32, 16 bits (half_types.h), or, for a
/// frozen weight, quantized as quantized_weight_layout.h lays it out (NF4 without or with
/// double quantization, int8 rows).
enum class StorageType : uint8_t { F32, BF16, F16, Nf4, Nf4DoubleQuant, Int8Rows };

inline bool isQuantized(StorageType storage) {
  return storage == StorageType::Nf4 || storage == StorageType::Nf4DoubleQuant ||
         storage == StorageType::Int8Rows;
}

/// One parameter tensor, named as in Hugging Face checkpoints.
struct ParamSlot {
  const char *name; ///< e.g. "bert.encoder.layer.0.attention.self.query.weight"
  int rank;
  int64_t shape[4];
  int64_t numel;
  size_t offset;      ///< the parameter's value (parameters region)
  bool trainable;     ///< false for frozen groups: no gradient, no optimizer state
  size_t gradOffset;  ///< gradient slot (gradients region); unused when frozen
  size_t adamMOffset; ///< first moment (optimizer_state region); unused when frozen
  size_t adamVOffset; ///< second moment (optimizer_state region); unused when frozen
  bool weightDecay;   ///< false for biases and LayerNorm weights
  ParamInit init;
  StorageType storage; ///< of the value at `offset` (the working copy)
  size_t masterOffset; ///< fp32 master (master_weights region; host-resident when frozen);
                       ///< unused for F32 storage and with workingCopyOnly
  /// 0: fp32 moments at adamMOffset and adamVOffset; else 8-bit state in blocks of this
  /// many values (adamw_8bit_state.h): codes at adamMOffset and adamVOffset, absmaxes at
  /// adamMAbsmaxOffset and adamVAbsmaxOffset.
  int32_t stateBlock = 0;
  size_t adamMAbsmaxOffset = 0;
  size_t adamVAbsmaxOffset = 0;
  /// An embedding table's padding row (nn.Embedding's padding_idx), which starts at zero;
  /// -1 for none.
  int64_t zeroRow = -1;
  /// Checkpoints hold this matrix transposed, as [shape[1], shape[0]] (transformers' Conv1D
  /// weights): loading and saving transpose it.
  bool checkpointTransposed = false;
  /// A Normal init's standard deviation is the run's initializer_range times this
  /// (GPT-2's residual projections: 1 / sqrt(2 n_layer)).
  double initScale = 1.0;
  /// A frozen parameter whose working copy (16-bit or quantized) is its only value: no
  /// fp32 master, as a LoRA job's base, which no checkpoint saves. Initialisation and
  /// loading round or quantize into it; merging an adapter reads it back.
  bool workingCopyOnly = false;
};

/// Where a parameter's fp32 values live: its master when stored in 16 bits, else its value.
/// Initialisation, loading and checkpoints read and write there. A workingCopyOnly
/// parameter has none (runtime/driver/parameter_values.h reads and writes it).
inline size_t fp32ValueOffset(const ParamSlot &param) {
  return param.storage == StorageType::F32 ? param.offset : param.masterOffset;
}

/// Whether the arena holds `param`'s fp32 values (at fp32ValueOffset).
inline bool hasFp32Values(const ParamSlot &param) {
  return param.storage == StorageType::F32 || !param.workingCopyOnly;
}

/// A contiguous byte range of the arena.
struct ArenaRegion {
  size_t offset;
  size_t bytes;
};

/// One of the step's int32 [batch, seq] inputs, by the name its model family gives it:
/// input_ids, token_type_ids, position_ids or attention_mask (1 for real tokens, 0 for
/// padding).
struct InputSlot {
  const char *name;
  size_t offset;
};

/// Where the step reads its inputs from and writes its loss to.
struct InputSlots {
  const InputSlot *model; ///< the model family's inputs
  size_t numModel;
  size_t labels; ///< by TaskKind: int32 [batch] classes, fp32 [batch] targets,
                 ///< int32 [batch, 2] span start/end, int32 [batch, seq] token classes
                 ///< or next tokens
  size_t loss;   ///< fp32 scalar: the micro-batch's share of the batch's mean loss
};

enum class LrSchedule : uint8_t { Constant, Linear };

/// What the head predicts, which decides the labels, the loss normalizer and the metrics.
enum class TaskKind : uint8_t {
  Classification,      ///< one class per row ([head] task = "classification" or "custom")
  Regression,          ///< one number per row (classification with labels = 1)
  Span,                ///< an answer's start and end token (SQuAD)
  TokenClassification, ///< one class per token, -100 where none
  CausalLM,            ///< the next token at each position, -100 where none
};

/// The [train] settings compiled into the trainer (flags can override some): the fields of
/// train_settings.def, where each is described.
struct TrainSettings {
#define BERTC_SETTING(type, field, key) type field;
#include "bertc/abi/train_settings.def"
#undef BERTC_SETTING
};

/// The job's [data] settings and files, the defaults of the trainer's data flags: the fields
/// of data_settings.def, where each is described. A trainer built from an .mlir file has
/// these defaults.
struct JobDataSettings {
#define BERTC_DATA_SETTING(type, field, key, value) type field = value;
#include "bertc/abi/data_settings.def"
#undef BERTC_DATA_SETTING
};

/// Everything the driver needs to know about the compiled model and its memory plan.
struct TrainerPlan {
  size_t arenaBytes;
  const ParamSlot *params;
  size_t numParams;
  ArenaRegion parameters;     ///< all parameter values, contiguous
  ArenaRegion gradients;      ///< all gradient slots, contiguous (zeroed per optimizer step)
  ArenaRegion optimizerState; ///< all AdamW moments, contiguous (zeroed at start)
  /// Kernel scratch: in a CPU trainer's plan first attentionScratchFloats(seqLen, the head
  /// dimension of a grouped-query one, else 0) floats, the most of any attention that runs
  /// fused (head_chunk 0); then the kernel workspace slot the ops share (bert.workspace).
  ArenaRegion scratch;
  InputSlots inputs;
  TrainSettings train;
  JobDataSettings data;
  const char *hfConfigJson;  ///< the model's Hugging Face config.json text ("" when unknown)
  ArenaRegion masterWeights; ///< fp32 masters of the trainable 16-bit parameters, contiguous
  bool lossScaling;          ///< fp16: dynamic loss scaling (loss_scaler.h) around each step
  bool planChecks;           ///< the steps report each tensor's use to StepContext::planCheck
  /// The arena's end, from the device arena's size on, which lives in host memory only:
  /// the fp32 masters of frozen 16-bit parameters, which only initialisation and
  /// checkpoints touch; with the optimizer offloaded (ZeRO-Offload) the master weights
  /// and optimizer state, which the host's AdamW alone touches; hostActivations and
  /// hostParameters. Empty when none of them.
  ArenaRegion hostResident;
  bool timesOps; ///< the steps report each op to StepContext::opTimer (bertc --time-ops)
  /// PEFT's adapter_config.json text when the job trains LoRA adapters, else null. With
  /// one, the model's frozen parameters come from the initial checkpoint only, and saves
  /// hold the trainable ones (the adapters, a task head) as adapter_model.safetensors,
  /// named base_model.model.<name>.
  const char *adapterConfigJson = nullptr;
  /// Inside hostResident: the host copies of the checkpoints the steps offload between the
  /// forward and the backward (bert.offload, bert.reload), which a CUDA runner page-locks
  /// and passes as cuda::StepDevice::hostArena. Empty when none are offloaded.
  ArenaRegion hostActivations = {};
  /// Inside hostResident: the values of the frozen embedding tables that the device's
  /// gathers read in place, which a CUDA runner page-locks and maps, passing its device
  /// address as cuda::StepDevice::hostMapped. Empty when the tables are on the device.
  ArenaRegion hostParameters = {};
};

/// Per-call state the generated step functions read.
struct StepContext {
  std::byte *arena;
  int64_t batch;          ///< rows in this micro-batch (<= microBatch)
  int64_t seq;            ///< tokens per row in this micro-batch (<= seqLen)
  float lossNormalizer;   ///< rows in the whole optimizer step (sum over its micro-batches)
  float lr;               ///< learning rate of this optimizer step (after the schedule)
  int64_t step;           ///< 1-based optimizer step
  uint64_t seed;          ///< dropout seed
  int64_t firstRow;       ///< this micro-batch's first row within the optimizer step's batch
  float *scratch;         ///< the arena's scratch region
  PlanChecker *planCheck; ///< the arena's ownership shadow with --plan-check, else null
                          ///< (read by steps built with TrainerPlan::planChecks)
  float lossScale;        ///< fp16 loss scale the backward's seed is multiplied by (else unused)
  int64_t adamStep;       ///< 1-based count of AdamW updates applied (step less skipped ones)
  bool lastMicroStep;     ///< this micro-step completes the optimizer step's gradients
  OpTimer *opTimer;       ///< the run's op timer where TrainerPlan::timesOps, else null
};

namespace cuda {
struct StepDevice; // the device resources of a run (bertc/runtime/cuda_step.h)
} // namespace cuda

/// The CPU target's steps, on the host arena (StepContext::arena).
struct CpuSteps {
  /// Forward and backward of one micro-batch: writes the loss and adds gradients into the
  /// gradients region.
  void (*microStep)(const StepContext &ctx);
  /// One AdamW update of every trainable parameter from the gradients region.
  void (*optimizerStep)(const StepContext &ctx);
  /// The micro-step's forward with dropout off, at the micro-step's own arena offsets:
  /// writes the loss (as microStep does) and copies the head's logits, as fp32, to
  /// `logits`: [batch, numLabels] (Classification, Regression), [batch, 2, seq] start and
  /// end logits (Span) or [batch, seq, numLabels] (TokenClassification). Touches no gradient.
  void (*evalStep)(const StepContext &ctx, float *logits);
};

/// The oldest GPU a CUDA trainer runs on, as compute capability x 10: the runtime's kernels
/// are built for sm_75 and newer (the oldest bertc --arch, and the CUDA 13 toolkit's).
inline constexpr int32_t kOldestCudaArch = 75;
/// The oldest that runs bf16 or TF32 GEMMs (cuBLASLt has neither before sm_80).
inline constexpr int32_t kBf16Tf32CudaArch = 80;
/// What in a CUDA trainer's steps needs a GPU newer than kOldestCudaArch: its GEMMs in bf16
/// or in TF32 (bertc --tf32) need kBf16Tf32CudaArch.
enum class NewerGpuMath : uint8_t { None, Bf16, Tf32 };

/// The CUDA target's steps, on the device arena: the same three, queued on the device's
/// stream (evalStep returns once the logits are in host memory), and the tables the
/// runtime sets the device up with.
struct CudaSteps {
  void (*microStep)(const StepContext &ctx, const cuda::StepDevice &device);
  void (*optimizerStep)(const StepContext &ctx, const cuda::StepDevice &device);
  void (*evalStep)(const StepContext &ctx, const cuda::StepDevice &device, float *logits);
  /// The trainable parameters for cuda::adamwChunks (values at fp32 offsets from the arena,
  /// state at fp32 offsets from the gradients region, which the two moment halves of the
  /// optimizer-state region parallel).
  const cuda::AdamWParameter *adamwParameters;
  size_t numAdamWParameters;
  /// The runtime's workspace (kCudaWorkspaceBytes: cuBLASLt's, the GEMMs' pointer arrays and
  /// the column sums' tickets), then the optimizer's tables (cuda::optimizerTables): the
  /// device arena's last bytes.
  size_t gemmWorkspaceOffset;
  ArenaRegion optimizerTables;
  /// With TrainerPlan::hostResident: AdamW of TrainerPlan::params[param] on the host arena
  /// (the CPU kernels, as CpuSteps' optimizerStep), which the runner runs for each trainable
  /// parameter once its gradient is down, before taking the parameter back up; microStep
  /// calls cuda::streamGradient as each gradient completes, and optimizerStep does nothing.
  /// Null otherwise.
  void (*hostUpdate)(const StepContext &ctx, size_t param);
  /// What in these steps needs a GPU newer than kOldestCudaArch; the runner refuses a GPU
  /// older than they need.
  NewerGpuMath newerGpuMath;
};

/// Changes whenever this header or kernel_workspace.h changes what either side reads, or
/// the runtime's functions that generated steps call change (10: InputSlots by name,
/// ParamSlot::zeroRow, JobDataSettings::padTokenId; 12: JobDataSettings::chatTemplate; 13:
/// ParamSlot::checkpointTransposed; 17: quantized StorageType, ParamSlot::workingCopyOnly;
/// 18: TrainerPlan::hostActivations, cuda::StepDevice::hostArena; 19:
/// TrainerPlan::hostParameters, cuda::StepDevice::hostMapped).
inline constexpr uint32_t kTrainerAbiVersion = 19;

/// A compiled trainer: its plan and the steps of the target it was built for (the other
/// target's are null).
struct Trainer {
  uint32_t abiVersion; ///< kTrainerAbiVersion of the header the trainer was built with
  const TrainerPlan *plan;
  const CpuSteps *cpu;
  const CudaSteps *cuda;
};

} // namespace bertc

/// The generated trainer's one export.
extern "C" const bertc::Trainer *bertc_trainer();

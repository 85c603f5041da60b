// Saved training state. A model folder is what Hugging Face loads (model.safetensors with HF
// tensor names, or its shards and model.safetensors.index.json; config.json, vocab.txt,
// tokenizer_config.json); a checkpoint folder adds what an exact resume needs
// (optimizer.safetensors with the AdamW moments, trainer_state.json with the step, schedule
// and data position). Every file is replaced atomically, and a checkpoint folder appears
// under its name only once complete, so a crash mid-save never leaves a broken checkpoint.
#pragma once

#include "bertc/abi/trainer.h"
#include "bertc/runtime/jsonl_data.h"
#include "bertc/runtime/loss_scaler.h"
#include "bertc/runtime/tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bertc {

/// A checkpoint that cannot be written, found, read or resumed from; what() names the path.
class CheckpointError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What trainer_state.json records: where training stands, and the settings that a resumed
/// run must share for its steps to equal the uninterrupted run's bit for bit. Dropout is
/// keyed by (seed, step) and an epoch's order by (seed, epoch), so no random state is saved.
struct TrainerState {
  int64_t globalStep = 0; ///< optimizer steps done
  int64_t maxSteps = 0;   ///< the run's total: the learning-rate schedule depends on it
  uint64_t seed = 0;
  int64_t batch = 0, microBatch = 0, accumulation = 0, seqLen = 0;
  bool shuffle = false;
  bool groupByLength = false;
  float lr = 0; ///< base learning rate (informational)
  LrSchedule schedule = LrSchedule::Constant;
  int64_t warmupSteps = 0; ///< (informational)
  std::string dataPath;    ///< (informational)
  int64_t dataRows = 0;
  uint64_t dataFingerprint = 0;        ///< datasetFingerprint of the training data
  BatcherState data;                   ///< the batcher's epoch, cursor and token counts
  DynamicLossScaler::State lossScaler; ///< fp16's loss scale and its counters
  /// With LoRA adapters, frozenModelFingerprint of the model they train on (the checkpoint
  /// does not hold it); none without adapters, or in a checkpoint written before it was kept.
  std::optional<uint64_t> frozenModelFingerprint;
};

/// trainer_state.json's text: Hugging Face's global_step, max_steps and fractional epoch,
/// then bertc's resume data.
std::string formatTrainerState(const TrainerState &state);

/// Parses trainer_state.json text; throws CheckpointError naming `path` and the key.
TrainerState parseTrainerState(const std::string &text, const std::string &path);

/// Throws CheckpointError, naming `where` and every difference by its field, when `saved`
/// is not what this run would have saved at its step. `current` is that: this run's
/// settings (seed, batch, micro-batch, accumulation, sequence length, shuffling, length
/// grouping, learning rate, schedule, warmup steps over the checkpoint's max_steps, the data's
/// rows and fingerprint) and, once those agree, the data position and token counts its
/// batcher reaches by the checkpoint's step. Without `lossScaling` the checkpoint's loss
/// scaler must be untouched.
void checkResumable(const TrainerState &saved, const TrainerState &current, bool lossScaling,
                    const std::string &where);

/// Writes every parameter of `plan`, by its Hugging Face name, as one F32 safetensors file;
/// with LoRA adapters, the trainable ones as adapter_model.safetensors names them.
void writeParameters(const std::string &path, const TrainerPlan &plan, const std::byte *arena);

/// The tokenizer a model folder is saved with: the run's vocabulary and, when the run
/// tokenized text, the settings it used.
struct TokenizerFiles {
  std::string vocabPath; ///< vocab.txt or tokenizer.json; "" when the run has none
  std::optional<TokenizerSettings> settings; ///< none for pre-tokenized data
};

/// Writes a Hugging Face model folder `dir` (created if needed): the parameters as
/// model.safetensors, or, when they exceed `maxShardBytes`, as shards and
/// model.safetensors.index.json (saveModelSafetensors, which removes the weights files of
/// an earlier save that the new ones do not replace); config.json when the plan has one; a
/// copy of tokenizer.vocabPath when that file exists: as vocab.txt, and beside it, with
/// tokenizer.settings, tokenizer_config.json (formatTokenizerConfig); or a tokenizer.json,
/// with the tokenizer_config.json, special_tokens_map.json and generation_config.json of
/// its folder. With LoRA adapters (lora_adapter.h), PEFT's files in place of the weights and
/// config.json: adapter_model.safetensors and adapter_config.json. Returns the names of the
/// files written.
std::vector<std::string> writeModelFolder(const std::string &dir, const TrainerPlan &plan,
                                          const std::byte *arena, const TokenizerFiles &tokenizer,
                                          uint64_t maxShardBytes);

/// Writes the model LoRA adapters were trained on, with each adapter merged into the weight
/// it adapts (PEFT's merge_and_unload: W + scaling * B A), as a Hugging Face model folder
/// like writeModelFolder's: every parameter but the adapters', in its storage type (a
/// 16-bit model's in 16 bits), config.json and the tokenizer's files. The plan must have
/// adapters (hasAdapters).
std::vector<std::string> writeMergedModelFolder(const std::string &dir, const TrainerPlan &plan,
                                                const std::byte *arena,
                                                const TokenizerFiles &tokenizer,
                                                uint64_t maxShardBytes);

/// Writes checkpoint `outDir`/checkpoint-STEP (STEP = state.globalStep): the model folder
/// files (writeModelFolder, with `maxShardBytes`), optimizer.safetensors ("<param>.exp_avg",
/// "<param>.exp_avg_sq" per trainable parameter) and trainer_state.json. Returns the
/// checkpoint's path.
std::string saveCheckpoint(const std::string &outDir, const TrainerPlan &plan,
                           const std::byte *arena, const TrainerState &state,
                           const TokenizerFiles &tokenizer, uint64_t maxShardBytes);

/// The checkpoint `path` names: `path` itself when it holds trainer_state.json, else its
/// complete checkpoint-N folder with the largest N. A checkpoint that an interrupted save
/// left only as .checkpoint-N.old is renamed back first (recoverFolderSwap). Throws
/// CheckpointError when there is none.
std::string findCheckpoint(const std::string &path);

/// Reads checkpoint `dir` into the arena (parameters, from model.safetensors or its shards,
/// or with LoRA adapters the trainable ones from adapter_model.safetensors; and AdamW
/// moments) and returns its state. Throws CheckpointError when its tensors are
/// not exactly the plan's parameters and moments with the plan's shapes, or when a file is
/// missing or malformed.
TrainerState loadCheckpoint(const std::string &dir, const TrainerPlan &plan, std::byte *arena);

} // namespace bertc

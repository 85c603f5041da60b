// LoRA adapters as PEFT saves them: adapter_model.safetensors holds the adapters (each
// one's lora_A and lora_B, those of a frozen group too) and a task head trained whole, named
// base_model.model.<name>, beside adapter_config.json; the frozen model is not saved.
#pragma once

#include "bertc/abi/trainer.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bertc {

inline constexpr const char *kAdapterPrefix = "base_model.model.";
inline constexpr const char *kAdapterSafetensorsName = "adapter_model.safetensors";
inline constexpr const char *kAdapterConfigName = "adapter_config.json";

/// Whether the plan trains LoRA adapters (TrainerPlan::adapterConfigJson).
inline bool hasAdapters(const TrainerPlan &plan) {
  return plan.adapterConfigJson && *plan.adapterConfigJson;
}

/// Whether `name` is an adapter's tensor: "<layer>.lora_A.weight" or "<layer>.lora_B.weight".
inline bool isLoraParameter(std::string_view name) {
  for (std::string_view suffix : {".lora_A.weight", ".lora_B.weight"})
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
      return true;
  return false;
}

/// Whether an adapter folder holds `param`: an adapter's tensor (trained, or frozen with its
/// group by [train] freeze: it is part of the adapter all the same) or a parameter that
/// trains whole (a task head, PEFT's modules_to_save).
inline bool inAdapterFolder(const ParamSlot &param) {
  return param.trainable || isLoraParameter(param.name);
}

/// What the adapters' product is multiplied by: lora_alpha / r (/ sqrt(r) with use_rslora)
/// of adapter_config.json's text. Throws std::runtime_error when a key is missing or wrong.
double adapterScaling(const std::string &configJson);

/// What differs between two adapter_config.json texts in the keys that make the adapters
/// and their training (r, lora_alpha, lora_dropout, use_rslora, target_modules): one
/// "KEY SAVED in the checkpoint, CURRENT here" each. Throws std::runtime_error when `saved`
/// is not a JSON object.
std::vector<std::string> adapterConfigDifferences(const std::string &saved,
                                                  const std::string &current);

/// A fingerprint of the model LoRA adapters train on: FNV-1a, a 64-bit word at a time, over
/// the names and values of the parameters an adapter folder does not hold (inAdapterFolder).
/// A checkpoint holds the adapters alone; the fingerprint lets --resume tell that the frozen
/// model it reloads is the one they were trained on.
uint64_t frozenModelFingerprint(const TrainerPlan &plan, const std::byte *arena);

/// PEFT's merge: weight [out, in] += scaling * loraB [out, rank] x loraA [rank, in], each sum
/// over the rank taken in double and the merged value rounded once to fp32.
void mergeAdapter(float *weight, const float *loraA, const float *loraB, int64_t out, int64_t in,
                  int64_t rank, double scaling);

} // namespace bertc

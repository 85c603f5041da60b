// Merging LoRA adapters into the weights they adapt (lora_adapter.h): PEFT's merge_and_unload.
#include "bertc/runtime/lora_adapter.h"

#include "bertc/runtime/parameter_values.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace bertc {

double adapterScaling(const std::string &configJson) {
  nlohmann::json config = nlohmann::json::parse(configJson, nullptr, /*allow_exceptions=*/false);
  auto number = [&](const char *key) {
    if (!config.is_object() || !config.contains(key) || !config[key].is_number())
      throw std::runtime_error(std::string("adapter_config.json: '") + key + "' is not a number");
    return config[key].get<double>();
  };
  double rank = number("r"), alpha = number("lora_alpha");
  bool rslora = config.value("use_rslora", false);
  if (!(rank >= 1))
    throw std::runtime_error("adapter_config.json: 'r' must be at least 1");
  return rslora ? alpha / std::sqrt(rank) : alpha / rank;
}

std::vector<std::string> adapterConfigDifferences(const std::string &saved,
                                                  const std::string &current) {
  nlohmann::json before = nlohmann::json::parse(saved, nullptr, /*allow_exceptions=*/false);
  nlohmann::json now = nlohmann::json::parse(current, nullptr, /*allow_exceptions=*/false);
  if (!before.is_object())
    throw std::runtime_error("adapter_config.json is not a JSON object");
  std::vector<std::string> differences;
  for (const char *key : {"r", "lora_alpha", "lora_dropout", "use_rslora", "target_modules"}) {
    nlohmann::json was = before.value(key, nlohmann::json()), is = now.value(key, nlohmann::json());
    if (was != is)
      differences.push_back(std::string(key) + " " + was.dump() + " in the checkpoint, " +
                            is.dump() + " here");
  }
  return differences;
}

// A word at a time, as a model's weights may be tens of gigabytes: each step (xor, then a
// multiplication by an odd number) is a bijection of the hash, so any one changed value
// changes the fingerprint.
uint64_t frozenModelFingerprint(const TrainerPlan &plan, const std::byte *arena) {
  uint64_t hash = 0xcbf29ce484222325u; // FNV-1a offset basis
  auto mixWord = [&](uint64_t word) {
    hash ^= word;
    hash *= 0x100000001b3u; // FNV prime
  };
  auto mix = [&](const void *data, size_t count) {
    const auto *bytes = static_cast<const unsigned char *>(data);
    for (; count >= sizeof(uint64_t); bytes += sizeof(uint64_t), count -= sizeof(uint64_t)) {
      uint64_t word;
      std::memcpy(&word, bytes, sizeof word);
      mixWord(word);
    }
    for (; count; ++bytes, --count)
      mixWord(*bytes);
  };
  for (size_t p = 0; p < plan.numParams; ++p) {
    const ParamSlot &param = plan.params[p];
    if (inAdapterFolder(param))
      continue; // the checkpoint holds it
    mix(param.name, std::strlen(param.name) + 1);
    if (hasFp32Values(param))
      mix(arena + fp32ValueOffset(param), size_t(param.numel) * sizeof(float));
    else
      mix(arena + param.offset, workingCopyBytes(param));
  }
  return hash;
}

void mergeAdapter(float *weight, const float *loraA, const float *loraB, int64_t out, int64_t in,
                  int64_t rank, double scaling) {
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) {
      double sum = 0;
      for (int64_t k = 0; k < rank; ++k)
        sum += double(loraB[o * rank + k]) * double(loraA[k * in + i]);
      weight[o * in + i] = float(double(weight[o * in + i]) + scaling * sum);
    }
}

} // namespace bertc

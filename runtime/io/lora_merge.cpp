// Merging LoRA adapters into the weights they adapt (lora_adapter.h): PEFT's merge_and_unload.
#include "bertc/runtime/lora_adapter.h"

#include <nlohmann/json.hpp>

#include <cmath>
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

// A trainer's parameters before its first step: drawn from the seed, or loaded from a
// pretrained checkpoint (--init), into the fp32 values of the host arena.
#pragma once

#include "bertc/abi/trainer.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace bertc {

/// Hugging Face's _init_weights for parameter `p`: normal(0, initializerRange), zeros or
/// ones, each value a function of the seed and its position alone.
void initializeParameter(const TrainerPlan &plan, std::byte *arena, size_t p, uint64_t seed);

/// Loads the parameters from a safetensors file (or DIR/model.safetensors, else the shards
/// of DIR/model.safetensors.index.json) or a PyTorch one: every encoder parameter must be
/// there; a task head or pooler the file lacks is initialised from the seed and listed
/// through `inform`, as from_pretrained does.
void loadParameters(const TrainerPlan &plan, std::byte *arena, const std::string &initPath,
                    uint64_t seed, const std::function<void(const std::string &)> &inform);

/// LoRA: what an adapter folder holds (inAdapterFolder: the adapters, those of a frozen
/// group too, and a task head) from a PEFT adapter file
/// (`path`: adapter_model.safetensors, or its folder), each by its base_model.model. name,
/// which must be there with its shape; other tensors are counted, not read.
void loadAdapters(const TrainerPlan &plan, std::byte *arena, const std::string &path,
                  const std::function<void(const std::string &)> &inform);

} // namespace bertc

// A trainer's parameters before its first step (parameter_init.h): drawn from the seed as
// Hugging Face's _init_weights draws them, or read from a pretrained checkpoint (a
// safetensors file, its shards, or a PyTorch file), every parameter through readParameter.
#include "parameter_init.h"

#include "bertc/runtime/bnb_4bit_weight.h"
#include "bertc/runtime/checkpoint_layout.h"
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_quantized_weight.h"
#include "bertc/runtime/lora_adapter.h"
#include "bertc/runtime/parameter_values.h"
#include "bertc/runtime/safetensors.h"
#include "bertc/runtime/safetensors_shards.h"
#include "bertc/runtime/torch_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

namespace bertc {

namespace {

std::vector<int64_t> shapeOf(const ParamSlot &param) {
  return std::vector<int64_t>(param.shape, param.shape + param.rank);
}

/// Where a parameter's fp32 values are written: its fp32 slot (its master when its working
/// copy is 16-bit) or, for a workingCopyOnly one, `staged`, which storeParameterValues then
/// rounds or quantizes into the working copy.
float *valuesOf(std::byte *arena, const ParamSlot &param, std::vector<float> &staged) {
  if (hasFp32Values(param))
    return reinterpret_cast<float *>(arena + fp32ValueOffset(param));
  staged.resize(size_t(param.numel));
  return staged.data();
}

/// Finishes a write through valuesOf.
void storeStaged(std::byte *arena, const ParamSlot &param, const std::vector<float> &staged) {
  if (!hasFp32Values(param))
    storeParameterValues(param, staged.data(), arena);
}

/// Step counter of the initialisation's random numbers: dropout keys by the 1-based
/// optimizer step, so step 0 never collides with it.
constexpr uint64_t kInitRandomStep = 0;

/// Names a parameter may carry in a Hugging Face checkpoint, preferred first: its own, the
/// legacy LayerNorm gamma/beta, and each without the "bert." or "transformer." prefix of
/// task models (BertModel's and GPT2Model's checkpoints lack it).
std::vector<std::string> checkpointNames(const std::string &name) {
  std::vector<std::string> names = {name};
  for (auto [modern, legacy] : {std::pair{".LayerNorm.weight", ".LayerNorm.gamma"},
                                std::pair{".LayerNorm.bias", ".LayerNorm.beta"}}) {
    size_t size = std::strlen(modern);
    if (name.size() > size && name.compare(name.size() - size, size, modern) == 0)
      names.push_back(name.substr(0, name.size() - size) + legacy);
  }
  for (size_t i = 0, count = names.size(); i < count; ++i)
    for (std::string prefix : {"bert.", "transformer."})
      if (names[i].rfind(prefix, 0) == 0)
        names.push_back(names[i].substr(prefix.size()));
  return names;
}

/// Whether a checkpoint must hold `name`: a base model's parameter ("bert.*" but the
/// pooler, which is the sequence-classification head's first layer and which a
/// token-classification or span checkpoint lacks; a decoder's "model.*" or
/// "transformer.*"), not a task head's (a classifier, a custom head, an untied LM head).
bool isBaseModelParameter(const std::string &name) {
  auto startsWith = [&](const char *prefix) { return name.rfind(prefix, 0) == 0; };
  return ((startsWith("bert.") && !startsWith("bert.pooler.")) || startsWith("model.") ||
          startsWith("transformer.")) &&
         !isLoraParameter(name);
}

/// The checkpoint file `initPath` names: itself, or a folder's model.safetensors, else its
/// model.safetensors.index.json (a sharded one), else its pytorch_model.bin. A folder with
/// only another framework's weights, or sharded PyTorch files, is refused with how to save
/// them.
std::string checkpointFile(const std::string &initPath) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(initPath))
    return initPath;
  fs::path folder(initPath), file = folder / kModelSafetensorsName;
  if (std::string safetensors = modelSafetensorsIn(initPath); !safetensors.empty())
    return safetensors;
  if (fs::exists(folder / "pytorch_model.bin"))
    return (folder / "pytorch_model.bin").string();
  for (const char *other : {"pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack"})
    if (fs::exists(folder / other))
      throw SafetensorsError(file.string() + ": not there; the folder holds " + other +
                             " only: save the model from transformers with "
                             "save_pretrained(folder, safe_serialization=True)");
  return file.string();
}

/// Reads the pre-quantized bitsandbytes NF4 weight `name` into `param`: a quantized
/// parameter's working copy takes its codes, absmaxes and maps as they are, after checking
/// it is what the plan stores there; any other parameter (a module bitsandbytes quantizes
/// and bertc does not, as BERT's pooler) takes its dequantized values.
void readPrequantized(ShardedSafetensorsReader &reader, const std::string &name,
                      const ParamSlot &param, std::byte *arena) {
  Bnb4bitWeight weight = findBnb4bitWeight(reader, name);
  std::string where = reader.fileOf(name) + ": tensor " + name;
  if (weight.state.shape != shapeOf(param))
    throw SafetensorsError(where + ": its quant_state's shape is not the model's [" +
                           std::to_string(param.shape[0]) + ", " +
                           std::to_string(param.numel / param.shape[0]) + "]");
  if (!isQuantized(param.storage)) {
    std::vector<std::byte> quantized(size_t(weight.layout.bytes));
    readBnb4bitWeight(reader, name, weight, quantized.data());
    std::vector<float> values(size_t(param.numel));
    cpu::dequantizeNf4(nf4WeightAt(quantized.data(), weight.layout), values.data());
    storeParameterValues(param, values.data(), arena);
    return;
  }
  if (param.storage == StorageType::Int8Rows)
    throw SafetensorsError(where + " is bitsandbytes NF4, but this trainer stores " + param.name +
                           " in int8: compile the job with [lora] base = \"nf4\"");
  bool nested = param.storage == StorageType::Nf4DoubleQuant;
  if (weight.layout.nested != nested)
    throw SafetensorsError(where + (weight.layout.nested ? " is" : " is not") +
                           " double quantized, this trainer's base " + (nested ? "is" : "is not") +
                           ": compile the job with [lora] double_quant = " +
                           (weight.layout.nested ? "true" : "false"));
  readBnb4bitWeight(reader, name, weight, arena + param.offset);
}

/// Reads parameter `param` from tensor `name` of `reader` into its fp32 values: what every
/// load here reads.
template <class Reader>
void readParameter(Reader &reader, const std::string &name, const ParamSlot &param,
                   std::byte *arena) {
  std::vector<float> staged;
  float *values = valuesOf(arena, param, staged);
  if (!param.checkpointTransposed) {
    reader.readF32(name, shapeOf(param), values);
  } else {
    std::vector<float> stored(size_t(param.numel));
    reader.readF32(name, checkpointShape(param), stored.data());
    transposeMatrix(stored.data(), param.shape[1], param.shape[0], values);
  }
  storeStaged(arena, param, staged);
}

/// loadParameters from an open checkpoint (ShardedSafetensorsReader or TorchCheckpointReader).
template <class Reader>
void loadFrom(Reader &reader, const std::string &path, const TrainerPlan &plan, std::byte *arena,
              uint64_t seed, const std::function<void(const std::string &)> &inform) {
  std::set<std::string> used;
  std::string freshHead;
  size_t freshAdapters = 0;
  for (size_t p = 0; p < plan.numParams; ++p) {
    const ParamSlot &param = plan.params[p];
    std::vector<std::string> names = checkpointNames(param.name);
    auto found = std::find_if(names.begin(), names.end(),
                              [&](const std::string &name) { return reader.contains(name); });
    if (found == names.end() && !isBaseModelParameter(param.name)) {
      initializeParameter(plan, arena, p, seed);
      if (isLoraParameter(param.name))
        ++freshAdapters;
      else
        freshHead += (freshHead.empty() ? "" : ", ") + std::string(param.name);
      continue;
    }
    std::string fileName = found == names.end() ? param.name : *found;
    // A bitsandbytes 4-bit weight (safetensors only) is its codes and its state's tensors.
    std::vector<std::string> bnbTensors;
    if constexpr (std::is_same_v<Reader, ShardedSafetensorsReader>) {
      bnbTensors = bnb4bitTensorNames(reader, fileName);
      if (!bnbTensors.empty())
        readPrequantized(reader, fileName, param, arena);
    }
    if (bnbTensors.empty())
      readParameter(reader, fileName, param, arena);
    used.insert(fileName);
    used.insert(bnbTensors.begin(), bnbTensors.end());
  }
  inform("init: " + std::to_string(used.size()) + " tensors loaded from " + path + ", " +
         std::to_string(reader.entries().size() - used.size()) +
         " in the file not used by this model ignored");
  if (!freshHead.empty())
    inform("init: not in the checkpoint, initialised from the seed: " + freshHead);
  if (freshAdapters)
    inform("init: " + std::to_string(freshAdapters) +
           " LoRA adapter tensors initialised from the seed (lora_A Kaiming-uniform, lora_B "
           "zeros)");
}
} // namespace

/// Hugging Face's _init_weights for parameter `p`: normal(0, initializerRange x initScale), zeros
/// or ones, and an embedding table's padding row (ParamSlot::zeroRow) zeros; a LoRA lora_A
/// uniform(-1 / sqrt(in), 1 / sqrt(in)) from the counter-based uniform (seed, p, i). A normal's
/// element i is a Box–Muller transform of the counter-based uniforms (seed, p, 2i) and
/// (seed, p, 2i+1), so each value depends on nothing but the seed and its position.
void initializeParameter(const TrainerPlan &plan, std::byte *arena, size_t p, uint64_t seed) {
  const double twoPi = 6.283185307179586;
  const ParamSlot &param = plan.params[p];
  std::vector<float> staged;
  float *values = valuesOf(arena, param, staged);
  // PEFT's lora_A init, kaiming_uniform_(a = sqrt(5)): the bound gain * sqrt(3 / fan_in)
  // with gain sqrt(2 / (1 + 5)) is 1 / sqrt(fan_in).
  const double bound = param.rank == 2 ? 1.0 / std::sqrt(double(param.shape[1])) : 0.0;
  for (int64_t i = 0; i < param.numel; ++i) {
    if (param.init == ParamInit::KaimingUniform) {
      double u = counterUniform(seed, kInitRandomStep, uint32_t(p), uint64_t(i));
      values[i] = float(bound * (2.0 * u - 1.0));
      continue;
    }
    if (param.init != ParamInit::Normal) {
      values[i] = param.init == ParamInit::Ones ? 1.0f : 0.0f;
      continue;
    }
    double u1 = 1.0 - counterUniform(seed, kInitRandomStep, uint32_t(p), 2 * uint64_t(i));
    double u2 = counterUniform(seed, kInitRandomStep, uint32_t(p), 2 * uint64_t(i) + 1);
    values[i] = float(plan.train.initializerRange * param.initScale *
                      std::sqrt(-2.0 * std::log(u1)) * std::cos(twoPi * u2));
  }
  if (param.zeroRow >= 0 && param.rank == 2 && param.zeroRow < param.shape[0])
    std::fill_n(values + param.zeroRow * param.shape[1], param.shape[1], 0.0f);
  storeStaged(arena, param, staged);
}

/// Loads the parameters from a safetensors file, a sharded one's index (each tensor read from
/// the shard it names), a PyTorch one (torch.save's, as pytorch_model.bin) or a folder
/// holding one of them. Every base model parameter
/// (isBaseModelParameter) must be there; a task-head or pooler parameter the file lacks (a
/// pretraining checkpoint has no classifier, a token-classification one no pooler) is initialised
/// from the seed, as Hugging Face's from_pretrained does, and listed. Tensors the model does not
/// use are counted, not read.
void loadParameters(const TrainerPlan &plan, std::byte *arena, const std::string &initPath,
                    uint64_t seed, const std::function<void(const std::string &)> &inform) {
  std::string path = checkpointFile(initPath);
  bool binary = path.size() >= 4 && path.compare(path.size() - 4, 4, ".bin") == 0;
  if (binary || looksLikeTorchCheckpoint(path)) {
    TorchCheckpointReader reader(path);
    loadFrom(reader, path, plan, arena, seed, inform);
  } else {
    ShardedSafetensorsReader reader(path);
    loadFrom(reader, path, plan, arena, seed, inform);
  }
}

void loadAdapters(const TrainerPlan &plan, std::byte *arena, const std::string &path,
                  const std::function<void(const std::string &)> &inform) {
  namespace fs = std::filesystem;
  std::string file =
      fs::is_directory(path) ? (fs::path(path) / kAdapterSafetensorsName).string() : path;
  ShardedSafetensorsReader reader(file);
  size_t read = 0;
  for (size_t p = 0; p < plan.numParams; ++p) {
    const ParamSlot &param = plan.params[p];
    if (!inAdapterFolder(param))
      continue;
    std::string name = kAdapterPrefix + std::string(param.name);
    if (!reader.contains(name))
      throw SafetensorsError(file + ": holds no " + name +
                             " (the adapter was trained on other layers, or another model)");
    readParameter(reader, name, param, arena);
    ++read;
  }
  inform("init: " + std::to_string(read) + " adapter tensors loaded from " + file + ", " +
         std::to_string(reader.entries().size() - read) + " in the file not used ignored");
}

} // namespace bertc

// Model folders and resumable checkpoints: their files saved atomically and checkpoint
// folders swapped in whole (save_files.h), a model's weights in one file or in shards
// (safetensors_shards.h), finding the latest checkpoint (recovering one a crash left
// mid-swap), and loading with an exact match of tensor names and shapes against the plan.
// Every tensor written goes through tensorToWrite and every tensor read through
// readTensor. trainer_state.json is trainer_state.cpp's.
#include "bertc/runtime/checkpoint.h"

#include "bertc/abi/adamw_8bit_state.h"
#include "bertc/runtime/checkpoint_layout.h"
#include "bertc/runtime/half_types.h"
#include "bertc/runtime/input_files.h"
#include "bertc/runtime/lora_adapter.h"
#include "bertc/runtime/parameter_values.h"
#include "bertc/runtime/safetensors.h"
#include "bertc/runtime/safetensors_shards.h"
#include "bertc/runtime/save_files.h"
#include "bertc/runtime/tokenizer_config.h"
#include "bertc/runtime/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <map>
#include <string>

namespace bertc {
namespace fs = std::filesystem;
namespace {

/// "[a,b]" as error messages print a shape.
std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The plan's text fields are "" or null (a generated plan that predates them).
std::string textOf(const char *field) { return field ? field : ""; }

/// A tensor of a checkpoint file, its place in the arena and its dtype ("F32", or "U8" for
/// the codes of 8-bit AdamW state).
struct TensorSlot {
  std::vector<int64_t> shape; ///< in the file
  size_t offset;
  std::string dtype = "F32";
  /// The file holds the transpose of the arena's [shape[1], shape[0]] matrix
  /// (ParamSlot::checkpointTransposed).
  bool transposed = false;
};
/// The transposed copies of the tensors being written, alive until they are.
using TransposedCopies = std::list<std::vector<float>>;
using TensorSlots = std::map<std::string, TensorSlot>;

/// The plan's parameters by Hugging Face name (with LoRA adapters, the trainable ones only,
/// as adapter_model.safetensors names them) or, with `moments`, the AdamW state of the
/// trainable ones as optimizer.safetensors names it: fp32 moments as "<param>.exp_avg" and
/// ".exp_avg_sq"; 8-bit state as bitsandbytes' Adam8bit names it, the moments' codes
/// "<param>.state1" and ".state2" (U8, the parameter's shape) and their blocks' absmaxes
/// ".absmax1" and ".absmax2" (F32), so a run resumes with the very state it saved.
TensorSlots tensorSlots(const TrainerPlan &plan, bool moments) {
  TensorSlots slots;
  for (size_t p = 0; p < plan.numParams; ++p) {
    const ParamSlot &param = plan.params[p];
    std::vector<int64_t> shape(param.shape, param.shape + param.rank);
    std::string name = param.name;
    if (!moments && hasAdapters(plan)) {
      if (inAdapterFolder(param))
        slots[kAdapterPrefix + name] = {checkpointShape(param), fp32ValueOffset(param), "F32",
                                        param.checkpointTransposed};
    } else if (!moments) {
      // The master of a 16-bit one, as transformers lays it out.
      slots[name] = {checkpointShape(param), fp32ValueOffset(param), "F32",
                     param.checkpointTransposed};
    } else if (param.trainable && param.stateBlock == 0) {
      slots[name + ".exp_avg"] = {shape, param.adamMOffset};
      slots[name + ".exp_avg_sq"] = {shape, param.adamVOffset};
    } else if (param.trainable) {
      std::vector<int64_t> blocks = {
          quantBlockCount(param.numel, QuantBlockSize(param.stateBlock))};
      slots[name + ".state1"] = {shape, param.adamMOffset, "U8"};
      slots[name + ".state2"] = {shape, param.adamVOffset, "U8"};
      slots[name + ".absmax1"] = {blocks, param.adamMAbsmaxOffset};
      slots[name + ".absmax2"] = {blocks, param.adamVAbsmaxOffset};
    }
  }
  return slots;
}

/// Tensor `name` of a checkpoint file as the arena's `slot` holds it: what every writer
/// here writes.
TensorToWrite tensorToWrite(const std::string &name, const TensorSlot &slot, const std::byte *arena,
                            TransposedCopies &copies) {
  const std::byte *values = arena + slot.offset;
  if (!slot.transposed)
    return {name, slot.shape, values, slot.dtype};
  std::vector<float> &copy = copies.emplace_back(size_t(slot.shape[0] * slot.shape[1]));
  transposeMatrix(reinterpret_cast<const float *>(values), slot.shape[1], slot.shape[0],
                  copy.data());
  return {name, slot.shape, copy.data(), slot.dtype};
}

/// Reads tensor `name` of `reader` into the arena's `slot`: what every reader here reads.
void readTensor(ShardedSafetensorsReader &reader, const std::string &name, const TensorSlot &slot,
                std::byte *arena) {
  std::byte *values = arena + slot.offset;
  if (slot.dtype == "U8") {
    reader.readU8(name, slot.shape, reinterpret_cast<uint8_t *>(values));
  } else if (!slot.transposed) {
    reader.readF32(name, slot.shape, reinterpret_cast<float *>(values));
  } else {
    std::vector<float> stored(size_t(slot.shape[0] * slot.shape[1]));
    reader.readF32(name, slot.shape, stored.data());
    transposeMatrix(stored.data(), slot.shape[0], slot.shape[1], reinterpret_cast<float *>(values));
  }
}

/// Writes the arena's `slots` as a safetensors file, atomically.
void writeTensors(const std::string &path, const TensorSlots &slots, const std::byte *arena) {
  std::vector<TensorToWrite> tensors;
  TransposedCopies copies;
  for (const auto &[name, slot] : slots)
    tensors.push_back(tensorToWrite(name, slot, arena, copies));
  writeSafetensors(path, tensors, {{"format", "pt"}});
}

/// The plan's parameters, in the plan's order (the model's, as a state dict lists them).
std::vector<TensorToWrite> parametersToWrite(const TrainerPlan &plan, const std::byte *arena,
                                             TransposedCopies &copies) {
  TensorSlots slots = tensorSlots(plan, /*moments=*/false);
  std::vector<TensorToWrite> tensors;
  const std::string prefix = hasAdapters(plan) ? kAdapterPrefix : "";
  for (size_t p = 0; p < plan.numParams; ++p)
    if (auto slot = slots.find(prefix + plan.params[p].name); slot != slots.end())
      tensors.push_back(tensorToWrite(slot->first, slot->second, arena, copies));
  return tensors;
}

/// Reads the arena's `expected` slots from the safetensors file `path` (or the shards of the
/// index `path`), after checking that it holds exactly those names with those shapes; every
/// difference is listed (at most 6) in one CheckpointError naming the checkpoint `dir`.
void readExactly(const std::string &path, const std::string &dir, const TensorSlots &expected,
                 std::byte *arena) {
  ShardedSafetensorsReader reader(path);
  std::vector<std::string> differences;
  for (const auto &[name, slot] : expected) {
    if (!reader.contains(name))
      differences.push_back("'" + name + "' is missing");
    else if (reader.entries().at(name).shape != slot.shape)
      differences.push_back("'" + name + "' is " + formatShape(reader.entries().at(name).shape) +
                            " in the checkpoint, " + formatShape(slot.shape) + " here");
    else if (slot.dtype == "U8" && reader.entries().at(name).dtype != "U8")
      differences.push_back("'" + name + "' is " + reader.entries().at(name).dtype +
                            " in the checkpoint, U8 here");
  }
  for (const auto &[name, entry] : reader.entries())
    if (!expected.count(name))
      differences.push_back("'" + name + "' is not in this model");
  if (!differences.empty()) {
    std::string list;
    for (size_t i = 0; i < differences.size() && i < 6; ++i)
      list += (i ? "; " : "") + differences[i];
    if (differences.size() > 6)
      list += "; and " + std::to_string(differences.size() - 6) + " more";
    throw CheckpointError(dir + ": checkpoint does not match this trainer: " +
                          fs::path(path).filename().string() + ": " + list);
  }
  for (const auto &[name, slot] : expected)
    readTensor(reader, name, slot, arena);
}

} // namespace

void writeParameters(const std::string &path, const TrainerPlan &plan, const std::byte *arena) {
  writeTensors(path, tensorSlots(plan, /*moments=*/false), arena);
}

namespace {

fs::path createFolder(const std::string &dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error)
    throw CheckpointError(dir + ": cannot create the folder: " + error.message());
  return dir;
}

/// Writes `text` (with a final newline) as `folder`/`name` unless it is empty.
void writeText(const fs::path &folder, const char *name, std::string text,
               std::vector<std::string> &written) {
  if (text.empty())
    return;
  if (text.back() != '\n')
    text += '\n';
  writeTextFileAtomically((folder / name).string(), text);
  written.push_back(name);
}

/// A copy of tokenizer.vocabPath when that file exists: as vocab.txt, and beside it, with
/// tokenizer.settings, tokenizer_config.json; or a tokenizer.json, with the files
/// transformers reads beside it.
void copyTokenizerFiles(const fs::path &folder, const TokenizerFiles &tokenizer,
                        std::vector<std::string> &written) {
  const std::string &vocab = tokenizer.vocabPath;
  auto copy = [&](const fs::path &from, const std::string &name) {
    writeFileAtomically((folder / name).string(), [&](const std::string &temporary) {
      std::error_code copyError;
      fs::copy_file(from, temporary, fs::copy_options::overwrite_existing, copyError);
      if (copyError)
        throw CheckpointError(from.string() + ": cannot copy to " + temporary + ": " +
                              copyError.message());
    });
    written.push_back(name);
  };
  if (vocab.empty() || !fs::is_regular_file(vocab))
    return;
  if (isTokenizerJson(vocab)) {
    copy(vocab, "tokenizer.json");
    for (const char *sibling :
         {"tokenizer_config.json", "special_tokens_map.json", "generation_config.json"})
      if (fs::path file = fs::path(vocab).parent_path() / sibling; fs::is_regular_file(file))
        copy(file, sibling);
    return;
  }
  copy(vocab, "vocab.txt");
  if (tokenizer.settings)
    writeText(folder, "tokenizer_config.json", formatTokenizerConfig(*tokenizer.settings), written);
}

/// The type a merged model is written in: the embeddings' (the first parameter's), which a
/// quantized base weight, written dequantized, takes too.
StorageType mergedModelStorage(const TrainerPlan &plan) {
  return plan.numParams > 0 ? plan.params[0].storage : StorageType::F32;
}

/// The name of the safetensors dtype of `storage`.
const char *storageDtype(StorageType storage) {
  return storage == StorageType::BF16 ? "BF16" : storage == StorageType::F16 ? "F16" : "F32";
}

/// `values` in `storage`'s bytes: as they are, or each rounded to 16 bits.
std::vector<std::byte> storedBytes(const std::vector<float> &values, StorageType storage) {
  auto bytesOf = [](const auto *data, size_t count) {
    const auto *begin = reinterpret_cast<const std::byte *>(data);
    return std::vector<std::byte>(begin, begin + count * sizeof(*data));
  };
  if (storage == StorageType::F32)
    return bytesOf(values.data(), values.size());
  if (storage == StorageType::BF16) {
    std::vector<bf16> halves(values.size());
    std::transform(values.begin(), values.end(), halves.begin(), fromFloat<bf16>);
    return bytesOf(halves.data(), halves.size());
  }
  std::vector<fp16> halves(values.size());
  std::transform(values.begin(), values.end(), halves.begin(), fromFloat<fp16>);
  return bytesOf(halves.data(), halves.size());
}

/// The model's parameters with each adapter merged into the weight it adapts (the adapters
/// themselves left out), laid out as checkpoints hold them, each in its storage type.
/// `buffers` owns the values until they are written.
std::vector<TensorToWrite> mergedParametersToWrite(const TrainerPlan &plan, const std::byte *arena,
                                                   std::list<std::vector<std::byte>> &buffers) {
  double scaling = adapterScaling(plan.adapterConfigJson);
  std::map<std::string, const ParamSlot *> byName;
  for (size_t p = 0; p < plan.numParams; ++p)
    byName[plan.params[p].name] = &plan.params[p];
  std::vector<TensorToWrite> tensors;
  for (size_t p = 0; p < plan.numParams; ++p) {
    const ParamSlot &param = plan.params[p];
    std::string name = param.name;
    if (isLoraParameter(name))
      continue;
    std::vector<float> values = parameterValues(param, arena);
    const std::string stem = name.size() > 7 ? name.substr(0, name.size() - 7) : "";
    auto loraA = byName.find(stem + ".lora_A.weight"), loraB = byName.find(stem + ".lora_B.weight");
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0 &&
        loraA != byName.end() && loraB != byName.end())
      mergeAdapter(values.data(), parameterValues(*loraA->second, arena).data(),
                   parameterValues(*loraB->second, arena).data(), param.shape[0], param.shape[1],
                   loraA->second->shape[0], scaling);
    if (param.checkpointTransposed) {
      std::vector<float> transposed(values.size());
      transposeMatrix(values.data(), param.shape[0], param.shape[1], transposed.data());
      values.swap(transposed);
    }
    StorageType storage = isQuantized(param.storage) ? mergedModelStorage(plan) : param.storage;
    std::vector<std::byte> &bytes = buffers.emplace_back(storedBytes(values, storage));
    tensors.push_back({name, checkpointShape(param), bytes.data(), storageDtype(storage)});
  }
  return tensors;
}

} // namespace

std::vector<std::string> writeModelFolder(const std::string &dir, const TrainerPlan &plan,
                                          const std::byte *arena, const TokenizerFiles &tokenizer,
                                          uint64_t maxShardBytes) {
  fs::path folder = createFolder(dir);
  TransposedCopies copies;
  std::vector<std::string> written;
  if (hasAdapters(plan)) {
    // PEFT's save_pretrained: the adapters (and a task head) and their config, not the model.
    writeSafetensors((folder / kAdapterSafetensorsName).string(),
                     parametersToWrite(plan, arena, copies), {{"format", "pt"}});
    written.push_back(kAdapterSafetensorsName);
    writeText(folder, kAdapterConfigName, plan.adapterConfigJson, written);
  } else {
    written = saveModelSafetensors(dir, parametersToWrite(plan, arena, copies), maxShardBytes);
    writeText(folder, "config.json", textOf(plan.hfConfigJson), written);
  }
  copyTokenizerFiles(folder, tokenizer, written);
  return written;
}

std::vector<std::string> writeMergedModelFolder(const std::string &dir, const TrainerPlan &plan,
                                                const std::byte *arena,
                                                const TokenizerFiles &tokenizer,
                                                uint64_t maxShardBytes) {
  fs::path folder = createFolder(dir);
  std::list<std::vector<std::byte>> buffers;
  std::vector<std::string> written =
      saveModelSafetensors(dir, mergedParametersToWrite(plan, arena, buffers), maxShardBytes);
  // transformers loads a model in its config's torch_dtype (float32 when it has none): the
  // merged weights' own.
  std::string config = textOf(plan.hfConfigJson);
  nlohmann::json json = nlohmann::json::parse(config, nullptr, /*allow_exceptions=*/false);
  if (json.is_object()) {
    StorageType storage = mergedModelStorage(plan);
    json["torch_dtype"] = storage == StorageType::BF16  ? "bfloat16"
                          : storage == StorageType::F16 ? "float16"
                                                        : "float32";
    config = json.dump(2);
  }
  writeText(folder, "config.json", config, written);
  copyTokenizerFiles(folder, tokenizer, written);
  return written;
}

/// The model folder files, optimizer.safetensors, and trainer_state.json last, assembled
/// and swapped in as OUT/checkpoint-STEP by replaceFolderAtomically.
std::string saveCheckpoint(const std::string &outDir, const TrainerPlan &plan,
                           const std::byte *arena, const TrainerState &state,
                           const TokenizerFiles &tokenizer, uint64_t maxShardBytes) {
  std::string destination =
      (fs::path(outDir) / ("checkpoint-" + std::to_string(state.globalStep))).string();
  replaceFolderAtomically(destination, [&](const std::string &partial) {
    writeModelFolder(partial, plan, arena, tokenizer, maxShardBytes);
    writeTensors((fs::path(partial) / "optimizer.safetensors").string(),
                 tensorSlots(plan, /*moments=*/true), arena);
    writeTextFileAtomically((fs::path(partial) / "trainer_state.json").string(),
                            formatTrainerState(state));
  });
  return destination;
}

std::string findCheckpoint(const std::string &path) {
  std::error_code error;
  recoverFolderSwap(namedPath(path));
  if (!fs::is_directory(path, error))
    throw CheckpointError(
        path + (fs::exists(path, error) ? ": not a folder" : ": no such checkpoint folder"));
  if (fs::exists(fs::path(path) / "trainer_state.json"))
    return path;
  std::string latest;
  int64_t latestStep = -1;
  // A save that a crash interrupted may have left a checkpoint only as .checkpoint-N.old.
  std::vector<fs::path> swappedOut;
  for (const fs::directory_entry &entry : fs::directory_iterator(path, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(".checkpoint-", 0) == 0 && name.size() > 4 &&
        name.compare(name.size() - 4, 4, ".old") == 0)
      swappedOut.push_back(fs::path(path) / name.substr(1, name.size() - 5));
  }
  for (const fs::path &checkpoint : swappedOut)
    recoverFolderSwap(namedPath(checkpoint.string()));
  for (const fs::directory_entry &entry : fs::directory_iterator(path, error)) {
    std::string name = entry.path().filename().string();
    const std::string prefix = "checkpoint-";
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() ||
        name.find_first_not_of("0123456789", prefix.size()) != std::string::npos ||
        !fs::exists(entry.path() / "trainer_state.json"))
      continue;
    int64_t step = std::strtoll(name.c_str() + prefix.size(), nullptr, 10); // saturates
    if (step > latestStep) {
      latestStep = step;
      latest = entry.path().string();
    }
  }
  if (latest.empty())
    throw CheckpointError(path + ": holds neither trainer_state.json nor a checkpoint-N "
                                 "folder to resume from");
  return latest;
}

TrainerState loadCheckpoint(const std::string &dir, const TrainerPlan &plan, std::byte *arena) {
  fs::path folder = dir;
  std::string statePath = (folder / "trainer_state.json").string();
  TrainerState state =
      parseTrainerState(readWholeFile<CheckpointError>(statePath, kStateFileLimit), statePath);
  // The adapters must be the ones this trainer builds, trained as it trains them.
  if (hasAdapters(plan)) {
    std::string configPath = (folder / kAdapterConfigName).string();
    std::string saved = readWholeFile<CheckpointError>(configPath, kStateFileLimit);
    std::vector<std::string> differences;
    try {
      differences = adapterConfigDifferences(saved, plan.adapterConfigJson);
    } catch (const std::runtime_error &error) {
      throw CheckpointError(configPath + ": " + error.what());
    }
    if (!differences.empty()) {
      std::string list;
      for (const std::string &difference : differences)
        list += "\n  " + difference;
      throw CheckpointError(dir + ": its adapters differ from this trainer's ([lora]):" + list +
                            "\nresume with a trainer built from the job the checkpoint was "
                            "saved by");
    }
  }
  // A checkpoint without either weights file is reported as missing its model.safetensors;
  // with LoRA adapters, it holds them alone.
  std::string model =
      hasAdapters(plan) ? (folder / kAdapterSafetensorsName).string() : modelSafetensorsIn(dir);
  readExactly(model.empty() ? (folder / kModelSafetensorsName).string() : model, dir,
              tensorSlots(plan, /*moments=*/false), arena);
  readExactly((folder / "optimizer.safetensors").string(), dir, tensorSlots(plan, /*moments=*/true),
              arena);
  return state;
}

} // namespace bertc

// Model folders and resumable checkpoints: their files saved atomically and checkpoint
// folders swapped in whole (save_files.h), a model's weights in one file or in shards
// (safetensors_shards.h), finding the latest checkpoint (recovering one a crash left
// mid-swap), and loading with an exact match of tensor names and shapes against the plan.
// Every tensor written goes through tensorToWrite and every tensor read through
// readTensor. trainer_state.json is trainer_state.cpp's.
#include "bertc/runtime/checkpoint.h"

#include "bertc/abi/adamw_8bit_state.h"
#include "bertc/runtime/checkpoint_layout.h"
#include "bertc/runtime/input_files.h"
#include "bertc/runtime/safetensors.h"
#include "bertc/runtime/safetensors_shards.h"
#include "bertc/runtime/save_files.h"
#include "bertc/runtime/tokenizer_config.h"
#include "bertc/runtime/tokenizer_json.h"

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

/// The plan's parameters by Hugging Face name or, with `moments`, the AdamW state of the
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
    if (!moments) {
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
  for (size_t p = 0; p < plan.numParams; ++p) {
    auto slot = slots.find(plan.params[p].name);
    tensors.push_back(tensorToWrite(slot->first, slot->second, arena, copies));
  }
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

std::vector<std::string> writeModelFolder(const std::string &dir, const TrainerPlan &plan,
                                          const std::byte *arena, const TokenizerFiles &tokenizer,
                                          uint64_t maxShardBytes) {
  const std::string &vocab = tokenizer.vocabPath;
  fs::path folder = dir;
  std::error_code error;
  fs::create_directories(folder, error);
  if (error)
    throw CheckpointError(dir + ": cannot create the folder: " + error.message());
  TransposedCopies copies;
  std::vector<std::string> written =
      saveModelSafetensors(dir, parametersToWrite(plan, arena, copies), maxShardBytes);
  if (std::string config = textOf(plan.hfConfigJson); !config.empty()) {
    if (config.back() != '\n')
      config += '\n';
    writeTextFileAtomically((folder / "config.json").string(), config);
    written.push_back("config.json");
  }
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
    return written;
  if (isTokenizerJson(vocab)) {
    // A decoder's tokenizer and the files transformers reads beside it.
    copy(vocab, "tokenizer.json");
    for (const char *sibling :
         {"tokenizer_config.json", "special_tokens_map.json", "generation_config.json"})
      if (fs::path file = fs::path(vocab).parent_path() / sibling; fs::is_regular_file(file))
        copy(file, sibling);
    return written;
  }
  copy(vocab, "vocab.txt");
  if (tokenizer.settings) {
    writeTextFileAtomically((folder / "tokenizer_config.json").string(),
                            formatTokenizerConfig(*tokenizer.settings));
    written.push_back("tokenizer_config.json");
  }
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
  // A checkpoint without either weights file is reported as missing its model.safetensors.
  std::string model = modelSafetensorsIn(dir);
  readExactly(model.empty() ? (folder / kModelSafetensorsName).string() : model, dir,
              tensorSlots(plan, /*moments=*/false), arena);
  readExactly((folder / "optimizer.safetensors").string(), dir, tensorSlots(plan, /*moments=*/true),
              arena);
  return state;
}

} // namespace bertc

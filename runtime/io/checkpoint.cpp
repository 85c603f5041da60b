// Model folders and resumable checkpoints: their files saved atomically and checkpoint
// folders swapped in whole (save_files.h), trainer_state.json, finding the latest checkpoint
// (recovering one a crash left mid-swap), and loading with an exact match of tensor names
// and shapes against the plan.
#include "bertc/runtime/checkpoint.h"

#include "bertc/abi/adamw_8bit_state.h"
#include "bertc/runtime/input_files.h"
#include "bertc/runtime/safetensors.h"
#include "bertc/runtime/save_files.h"
#include "bertc/runtime/tokenizer_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

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

/// `value` as the double of its shortest round-tripping decimal, so 2e-5f reads 2e-05 in
/// JSON rather than 1.9999999494757503e-05.
double shortestDecimal(float value) {
  char text[32];
  for (int digits = 6;; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, double(value));
    if (digits >= 9 || std::strtof(text, nullptr) == value)
      return std::strtod(text, nullptr);
  }
}

/// A tensor of a checkpoint file, its place in the arena and its dtype ("F32", or "U8" for
/// the codes of 8-bit AdamW state).
struct TensorSlot {
  std::vector<int64_t> shape;
  size_t offset;
  std::string dtype = "F32";
};
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
      slots[name] = {shape, fp32ValueOffset(param)}; // the master of a 16-bit one
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

/// Writes the arena's `slots` as a safetensors file, atomically.
void writeTensors(const std::string &path, const TensorSlots &slots, const std::byte *arena) {
  std::vector<TensorToWrite> tensors;
  for (const auto &[name, slot] : slots)
    tensors.push_back({name, slot.shape, arena + slot.offset, slot.dtype});
  writeSafetensors(path, tensors, {{"format", "pt"}});
}

/// Reads the arena's `expected` slots from the safetensors file `path`, after checking that
/// the file holds exactly those names with those shapes; every difference is listed (at
/// most 6) in one CheckpointError naming the checkpoint `dir`.
void readExactly(const std::string &path, const std::string &dir, const TensorSlots &expected,
                 std::byte *arena) {
  SafetensorsReader reader(path);
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
  for (const auto &[name, slot] : expected) {
    if (slot.dtype == "U8")
      reader.readU8(name, slot.shape, reinterpret_cast<uint8_t *>(arena + slot.offset));
    else
      reader.readF32(name, slot.shape, reinterpret_cast<float *>(arena + slot.offset));
  }
}

} // namespace

std::string formatTrainerState(const TrainerState &state) {
  const BatcherState &data = state.data;
  // Hugging Face's fractional epoch: completed epochs plus the share of the current one.
  double epochs = data.epoch == 0
                      ? 0.0
                      : double(data.epoch - 1) +
                            double(data.cursor) / double(std::max<int64_t>(state.dataRows, 1));
  char fingerprint[17];
  std::snprintf(fingerprint, sizeof fingerprint, "%016llx",
                static_cast<unsigned long long>(state.dataFingerprint));
  nlohmann::ordered_json json = {
      {"global_step", state.globalStep},
      {"max_steps", state.maxSteps},
      {"epoch", epochs},
      {"seed", state.seed},
      {"train_batch_size", state.batch},
      {"micro_batch", state.microBatch},
      {"accumulation", state.accumulation},
      {"seq_len", state.seqLen},
      {"shuffle", state.shuffle},
      {"group_by_length", state.groupByLength},
      {"learning_rate", shortestDecimal(state.lr)},
      {"lr_schedule", state.schedule == LrSchedule::Linear ? "linear" : "constant"},
      {"warmup_steps", state.warmupSteps},
      {"data", {{"path", state.dataPath}, {"rows", state.dataRows}, {"fingerprint", fingerprint}}},
      {"data_position", {{"epoch", data.epoch}, {"cursor", data.cursor}}},
      {"tokens", {{"real", data.tokens.real}, {"computed", data.tokens.computed}}},
      {"loss_scaler",
       {{"scale", state.lossScaler.scale},
        {"good_steps_in_row", state.lossScaler.goodStepsInRow},
        {"skipped_steps", state.lossScaler.skipped}}}};
  // The data path is the user's bytes, which need not be UTF-8 (a Latin-1 file name): such
  // bytes become U+FFFD, as the path is only ever shown, never opened.
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

/// Reads trainer_state.json field by field: each must exist with its type and lie in its
/// range, and the counts must agree with one another (a step within the run's steps, a
/// data position within the data, no more skipped steps than steps), so that a damaged or
/// hand-edited file is refused with the key named rather than trained from.
TrainerState parseTrainerState(const std::string &text, const std::string &path) {
  nlohmann::json json = parseJsonFile<CheckpointError>(text, path);
  if (!json.is_object())
    throw CheckpointError(path + ": not a JSON object");
  // The value at a '/'-separated key path, which must exist with the type `want` accepts.
  auto field = [&](const char *keys, bool (nlohmann::json::*want)() const noexcept,
                   const char *typeName) -> const nlohmann::json & {
    const nlohmann::json *value = &json;
    std::stringstream parts(keys);
    for (std::string key; std::getline(parts, key, '/');) {
      if (!value->is_object() || !value->contains(key))
        throw CheckpointError(path + ": missing '" + std::string(keys) + "'");
      value = &(*value)[key];
    }
    if (!(value->*want)())
      throw CheckpointError(path + ": '" + std::string(keys) + "' must be " + typeName);
    return *value;
  };
  // An integer in [low, high]; one beyond int64 (which would wrap) is out of range too.
  auto integer = [&](const char *keys, int64_t low, int64_t high = INT64_MAX) {
    const nlohmann::json &value = field(keys, &nlohmann::json::is_number_integer, "an integer");
    bool fits = !value.is_number_unsigned() || value.get<uint64_t>() <= uint64_t(INT64_MAX);
    if (!fits || value.get<int64_t>() < low || value.get<int64_t>() > high)
      throw CheckpointError(path + ": '" + keys + "' must be an integer in [" +
                            std::to_string(low) + ", " + std::to_string(high) + "], got " +
                            value.dump());
    return value.get<int64_t>();
  };
  // A finite number in (0, FLT_MAX], as the float it is used as.
  auto positiveFloat = [&](const char *keys) {
    const nlohmann::json &value = field(keys, &nlohmann::json::is_number, "a number");
    double number = value.get<double>();
    // A number below a float's smallest (1e-50) would become 0 as the float.
    if (!(number > 0 && number <= std::numeric_limits<float>::max() && float(number) > 0))
      throw CheckpointError(path + ": '" + keys + "' must be a positive float, got " +
                            value.dump());
    return float(number);
  };
  auto boolean = [&](const char *keys) {
    return field(keys, &nlohmann::json::is_boolean, "true or false").get<bool>();
  };
  auto string = [&](const char *keys) {
    return field(keys, &nlohmann::json::is_string, "a string").get<std::string>();
  };
  TrainerState state;
  state.maxSteps = integer("max_steps", 0);
  state.globalStep = integer("global_step", 0, state.maxSteps);
  state.seed =
      field("seed", &nlohmann::json::is_number_unsigned, "a non-negative integer").get<uint64_t>();
  state.batch = integer("train_batch_size", 1);
  state.microBatch = integer("micro_batch", 1, state.batch);
  state.accumulation = integer("accumulation", 1, state.batch);
  state.seqLen = integer("seq_len", 1);
  state.shuffle = boolean("shuffle");
  state.groupByLength = boolean("group_by_length");
  state.lr = positiveFloat("learning_rate");
  std::string schedule = string("lr_schedule");
  if (schedule != "linear" && schedule != "constant")
    throw CheckpointError(path + ": 'lr_schedule' must be \"linear\" or \"constant\", got \"" +
                          schedule + "\"");
  state.schedule = schedule == "linear" ? LrSchedule::Linear : LrSchedule::Constant;
  state.warmupSteps = integer("warmup_steps", 0, state.maxSteps);
  state.dataPath = string("data/path");
  state.dataRows = integer("data/rows", 1);
  std::string fingerprint = string("data/fingerprint");
  if (fingerprint.empty() || fingerprint.size() > 16 ||
      fingerprint.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    throw CheckpointError(path + ": 'data/fingerprint' must be hexadecimal (16 digits)");
  state.dataFingerprint = std::strtoull(fingerprint.c_str(), nullptr, 16);
  state.data.epoch = integer("data_position/epoch", 0);
  state.data.cursor = integer("data_position/cursor", 0, state.data.epoch ? state.dataRows : 0);
  state.data.tokens.computed = integer("tokens/computed", 0);
  state.data.tokens.real = integer("tokens/real", 0, state.data.tokens.computed);
  state.lossScaler.scale = positiveFloat("loss_scaler/scale");
  state.lossScaler.goodStepsInRow = integer("loss_scaler/good_steps_in_row", 0, state.globalStep);
  state.lossScaler.skipped = integer("loss_scaler/skipped_steps", 0, state.globalStep);
  return state;
}

void checkResumable(const TrainerState &saved, const TrainerState &current,
                    const std::string &where) {
  std::vector<std::string> differences;
  auto compare = [&](const char *what, const std::string &savedValue,
                     const std::string &currentValue) {
    if (savedValue != currentValue)
      differences.push_back(std::string(what) + " " + savedValue + " in the checkpoint, " +
                            currentValue + " here");
  };
  auto onOff = [](bool value) { return std::string(value ? "on" : "off"); };
  compare("seed", std::to_string(saved.seed), std::to_string(current.seed));
  compare("batch", std::to_string(saved.batch), std::to_string(current.batch));
  compare("micro-batch", std::to_string(saved.microBatch), std::to_string(current.microBatch));
  compare("accumulation", std::to_string(saved.accumulation), std::to_string(current.accumulation));
  compare("seq_len", std::to_string(saved.seqLen), std::to_string(current.seqLen));
  compare("shuffle", onOff(saved.shuffle), onOff(current.shuffle));
  compare("group_by_length", onOff(saved.groupByLength), onOff(current.groupByLength));
  compare("data rows", std::to_string(saved.dataRows), std::to_string(current.dataRows));
  if (saved.dataRows == current.dataRows && saved.dataFingerprint != current.dataFingerprint)
    differences.push_back("the training data's content differs from " + saved.dataPath);
  if (differences.empty())
    return;
  std::string list;
  for (size_t i = 0; i < differences.size(); ++i)
    list += (i ? "; " : "") + differences[i];
  throw CheckpointError(where + ": cannot resume exactly: " + list);
}

void writeParameters(const std::string &path, const TrainerPlan &plan, const std::byte *arena) {
  writeTensors(path, tensorSlots(plan, /*moments=*/false), arena);
}

std::vector<std::string> writeModelFolder(const std::string &dir, const TrainerPlan &plan,
                                          const std::byte *arena, const TokenizerFiles &tokenizer) {
  const std::string &vocab = tokenizer.vocabPath;
  fs::path folder = dir;
  std::error_code error;
  fs::create_directories(folder, error);
  if (error)
    throw CheckpointError(dir + ": cannot create the folder: " + error.message());
  std::vector<std::string> written = {"model.safetensors"};
  writeParameters((folder / "model.safetensors").string(), plan, arena);
  if (std::string config = textOf(plan.hfConfigJson); !config.empty()) {
    if (config.back() != '\n')
      config += '\n';
    writeTextFileAtomically((folder / "config.json").string(), config);
    written.push_back("config.json");
  }
  if (!vocab.empty() && fs::is_regular_file(vocab)) {
    writeFileAtomically((folder / "vocab.txt").string(), [&](const std::string &temporary) {
      std::error_code copyError;
      fs::copy_file(vocab, temporary, fs::copy_options::overwrite_existing, copyError);
      if (copyError)
        throw CheckpointError(vocab + ": cannot copy to " + temporary + ": " + copyError.message());
    });
    written.push_back("vocab.txt");
    if (tokenizer.settings) {
      writeTextFileAtomically((folder / "tokenizer_config.json").string(),
                              formatTokenizerConfig(*tokenizer.settings));
      written.push_back("tokenizer_config.json");
    }
  }
  return written;
}

/// The model folder files, optimizer.safetensors, and trainer_state.json last, assembled
/// and swapped in as OUT/checkpoint-STEP by replaceFolderAtomically.
std::string saveCheckpoint(const std::string &outDir, const TrainerPlan &plan,
                           const std::byte *arena, const TrainerState &state,
                           const TokenizerFiles &tokenizer) {
  std::string destination =
      (fs::path(outDir) / ("checkpoint-" + std::to_string(state.globalStep))).string();
  replaceFolderAtomically(destination, [&](const std::string &partial) {
    writeModelFolder(partial, plan, arena, tokenizer);
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
  readExactly((folder / "model.safetensors").string(), dir, tensorSlots(plan, /*moments=*/false),
              arena);
  readExactly((folder / "optimizer.safetensors").string(), dir, tensorSlots(plan, /*moments=*/true),
              arena);
  return state;
}

} // namespace bertc

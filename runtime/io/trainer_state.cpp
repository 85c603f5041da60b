// trainer_state.json, a checkpoint's record of where its run stands: written, read field by
// field with every key's type and range checked, and compared with the run that resumes
// from it, each difference named.
#include "bertc/runtime/checkpoint.h"

#include "bertc/runtime/input_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace bertc {
namespace {

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

/// Hugging Face's fractional epoch of a data position: completed epochs plus the share of
/// the current one.
double fractionalEpoch(const BatcherState &data, int64_t rows) {
  return data.epoch == 0
             ? 0.0
             : double(data.epoch - 1) + double(data.cursor) / double(std::max<int64_t>(rows, 1));
}

/// "scale 1024, 3 good steps in a row, 2 skipped": a loss scaler's state in a message.
std::string formatLossScaler(const DynamicLossScaler::State &scaler) {
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.9g", double(scaler.scale));
  return "scale " + std::string(scale) + ", " + std::to_string(scaler.goodStepsInRow) +
         " good steps in a row, " + std::to_string(scaler.skipped) + " skipped";
}

/// Whether `scaler` is a state DynamicLossScaler reaches in `steps` steps: its skipped
/// steps and the good ones since the last skip or growth within them, and its scale the
/// initial one halved per skipped step and doubled per growth interval of good steps.
bool reachableLossScaler(const DynamicLossScaler::State &scaler, int64_t steps) {
  int64_t good = steps - scaler.skipped; // steps whose gradients were finite
  if (scaler.goodStepsInRow >= DynamicLossScaler::kGrowthInterval || scaler.goodStepsInRow > good)
    return false;
  int exponent;
  if (std::frexp(double(scaler.scale), &exponent) != 0.5)
    return false; // not a power of two
  // scale = initial * 2^(growths - skipped), with `growths` whole intervals of good steps.
  int initialExponent;
  std::frexp(double(DynamicLossScaler::kInitialScale), &initialExponent);
  int64_t growths = int64_t(exponent - initialExponent) + scaler.skipped;
  return growths >= 0 &&
         growths <= (good - scaler.goodStepsInRow) / DynamicLossScaler::kGrowthInterval;
}

/// `value` as 16 hexadecimal digits.
std::string hexFingerprint(uint64_t value) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(value));
  return digits;
}

} // namespace

std::string formatTrainerState(const TrainerState &state) {
  const BatcherState &data = state.data;
  double epochs = fractionalEpoch(data, state.dataRows);
  std::string fingerprint = hexFingerprint(state.dataFingerprint);
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
  if (state.frozenModelFingerprint)
    json["frozen_model"] = {{"fingerprint", hexFingerprint(*state.frozenModelFingerprint)}};
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
  auto hexadecimal = [&](const char *keys) {
    std::string digits = string(keys);
    if (digits.empty() || digits.size() > 16 ||
        digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
      throw CheckpointError(path + ": '" + keys + "' must be hexadecimal (16 digits)");
    return uint64_t(std::strtoull(digits.c_str(), nullptr, 16));
  };
  state.dataFingerprint = hexadecimal("data/fingerprint");
  // A LoRA run's (absent from checkpoints without adapters, and from older ones).
  if (json.contains("frozen_model"))
    state.frozenModelFingerprint = hexadecimal("frozen_model/fingerprint");
  // Every step reads at least one row of one epoch: after a step, the epoch is at most the
  // step count and its cursor past its first row.
  bool started = state.globalStep > 0;
  state.data.epoch = integer("data_position/epoch", started ? 1 : 0, state.globalStep);
  state.data.cursor =
      integer("data_position/cursor", started ? 1 : 0, started ? state.dataRows : 0);
  double epoch = field("epoch", &nlohmann::json::is_number, "a number").get<double>();
  if (epoch != fractionalEpoch(state.data, state.dataRows))
    throw CheckpointError(path + ": 'epoch' must be " +
                          nlohmann::json(fractionalEpoch(state.data, state.dataRows)).dump() +
                          " (data_position's epoch " + std::to_string(state.data.epoch) + ", row " +
                          std::to_string(state.data.cursor) + " of " +
                          std::to_string(state.dataRows) + "), got " +
                          nlohmann::json(epoch).dump());
  // The rows read so far, each computed at seq_len tokens or fewer.
  int64_t rowsRead = 0, tokensMost = 0;
  if (__builtin_mul_overflow(started ? state.data.epoch - 1 : 0, state.dataRows, &rowsRead) ||
      __builtin_add_overflow(rowsRead, state.data.cursor, &rowsRead) ||
      __builtin_mul_overflow(rowsRead, state.seqLen, &tokensMost))
    tokensMost = INT64_MAX;
  state.data.tokens.computed = integer("tokens/computed", 0, tokensMost);
  state.data.tokens.real = integer("tokens/real", 0, state.data.tokens.computed);
  state.lossScaler.scale = positiveFloat("loss_scaler/scale");
  state.lossScaler.skipped = integer("loss_scaler/skipped_steps", 0, state.globalStep);
  state.lossScaler.goodStepsInRow = integer("loss_scaler/good_steps_in_row", 0,
                                            std::min(state.globalStep - state.lossScaler.skipped,
                                                     DynamicLossScaler::kGrowthInterval - 1));
  if (!reachableLossScaler(state.lossScaler, state.globalStep))
    throw CheckpointError(path + ": 'loss_scaler/scale' must be " +
                          std::to_string(int64_t(DynamicLossScaler::kInitialScale)) +
                          " halved once per skipped step and doubled once per " +
                          std::to_string(DynamicLossScaler::kGrowthInterval) +
                          " good steps in a row, which " + std::to_string(state.globalStep) +
                          " steps with " + std::to_string(state.lossScaler.skipped) +
                          " skipped cannot make " + nlohmann::json(state.lossScaler.scale).dump());
  return state;
}

void checkResumable(const TrainerState &saved, const TrainerState &current, bool lossScaling,
                    const std::string &where) {
  std::vector<std::string> differences;
  auto compare = [&](const char *what, const std::string &savedValue,
                     const std::string &currentValue) {
    if (savedValue != currentValue)
      differences.push_back(std::string(what) + " " + savedValue + " in the checkpoint, " +
                            currentValue + " here");
  };
  auto onOff = [](bool value) { return std::string(value ? "on" : "off"); };
  auto decimal = [](float value) { return nlohmann::json(shortestDecimal(value)).dump(); };
  compare("seed", std::to_string(saved.seed), std::to_string(current.seed));
  compare("batch", std::to_string(saved.batch), std::to_string(current.batch));
  compare("micro-batch", std::to_string(saved.microBatch), std::to_string(current.microBatch));
  compare("accumulation", std::to_string(saved.accumulation), std::to_string(current.accumulation));
  compare("seq_len", std::to_string(saved.seqLen), std::to_string(current.seqLen));
  compare("shuffle", onOff(saved.shuffle), onOff(current.shuffle));
  compare("group_by_length", onOff(saved.groupByLength), onOff(current.groupByLength));
  compare("learning_rate", decimal(saved.lr), decimal(current.lr));
  auto scheduleName = [](LrSchedule schedule) {
    return std::string(schedule == LrSchedule::Linear ? "linear" : "constant");
  };
  compare("lr_schedule", scheduleName(saved.schedule), scheduleName(current.schedule));
  compare("warmup_steps", std::to_string(saved.warmupSteps), std::to_string(current.warmupSteps));
  compare("data rows", std::to_string(saved.dataRows), std::to_string(current.dataRows));
  if (saved.dataRows == current.dataRows && saved.dataFingerprint != current.dataFingerprint)
    differences.push_back("the training data's content differs from " + saved.dataPath);
  if (saved.frozenModelFingerprint && current.frozenModelFingerprint &&
      *saved.frozenModelFingerprint != *current.frozenModelFingerprint)
    differences.push_back("the frozen model (--init's, else [model] from's, else the seed's) is "
                          "not the one the checkpoint's adapters were trained on: pass the "
                          "run's --init");
  DynamicLossScaler::State untouched;
  bool scalerUntouched = saved.lossScaler.scale == untouched.scale &&
                         saved.lossScaler.goodStepsInRow == untouched.goodStepsInRow &&
                         saved.lossScaler.skipped == untouched.skipped;
  if (!lossScaling && !scalerUntouched)
    differences.push_back("loss_scaler " + formatLossScaler(saved.lossScaler) +
                          " in the checkpoint, but this run does not scale its loss");
  // Where the data stands follows from the settings: compared once they agree.
  if (differences.empty()) {
    auto position = [](const BatcherState &data) {
      return "epoch " + std::to_string(data.epoch) + ", row " + std::to_string(data.cursor);
    };
    auto tokens = [](const TokenCounts &counts) {
      return std::to_string(counts.real) + " real of " + std::to_string(counts.computed);
    };
    std::string after = " after step " + std::to_string(saved.globalStep) + " here";
    if (saved.data.epoch != current.data.epoch || saved.data.cursor != current.data.cursor)
      differences.push_back("data_position " + position(saved.data) + " in the checkpoint, " +
                            position(current.data) + after);
    else if (saved.data.tokens.real != current.data.tokens.real ||
             saved.data.tokens.computed != current.data.tokens.computed)
      differences.push_back("tokens " + tokens(saved.data.tokens) + " in the checkpoint, " +
                            tokens(current.data.tokens) + after);
  }
  if (differences.empty())
    return;
  std::string list;
  for (size_t i = 0; i < differences.size(); ++i)
    list += (i ? "; " : "") + differences[i];
  throw CheckpointError(where + ": cannot resume exactly: " + list);
}

} // namespace bertc

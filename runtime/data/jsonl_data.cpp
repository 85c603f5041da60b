// JSONL loading with file:line diagnostics, and the epoch/shuffle/length-grouping/padding
// logic of the batcher. All memory the batcher needs (the per-epoch order) is taken at
// construction, before the arena, so nothing is allocated while training.
#include "bertc/runtime/jsonl_data.h"

#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/input_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace bertc {
namespace {

/// Random stream of the shuffle, distinct from any dropout stream by construction (the
/// shuffle keys by epoch where dropout keys by optimizer step, and uses its own stream id).
constexpr uint32_t kShuffleStream = 0x53485546u; // "SHUF"

/// Reads one integer of a row, clamping values beyond int64 so range checks reject them.
bool readInteger(const nlohmann::json &value, int64_t &out) {
  if (!value.is_number_integer())
    return false;
  if (value.is_number_unsigned()) {
    uint64_t wide = value.get<uint64_t>();
    out = wide > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(wide);
  } else {
    out = value.get<int64_t>();
  }
  return true;
}

/// Cuts a row to the tokens its attention_mask attends to: a tokenizer's right padding
/// (1s, then 0s), which the batcher pads again as it needs.
template <typename Fail>
void dropPadding(const nlohmann::json &mask, const Fail &fail, Example &example) {
  if (!mask.is_array() || mask.size() != example.inputIds.size())
    throw fail("'attention_mask' must be an array of 0s and 1s as long as 'input_ids' (" +
               std::to_string(example.inputIds.size()) + "), got " +
               (mask.is_array() ? std::to_string(mask.size()) + " entries"
                                : std::string(mask.type_name())));
  // 1 and 0, as tokenizers write them, or true and false.
  auto is = [](const nlohmann::json &value, int bit) {
    return value.is_boolean() ? value.get<bool>() == (bit == 1) : value == bit;
  };
  size_t attended = 0;
  while (attended < mask.size() && is(mask[attended], 1))
    ++attended;
  for (size_t i = attended; i < mask.size(); ++i)
    if (!is(mask[i], 0))
      throw fail("attention_mask[" + std::to_string(i) + "] is " + mask[i].dump() +
                 ": bertc reads a mask of 1s then 0s (padding on the right)");
  if (attended == 0)
    throw fail("'attention_mask' attends to no token");
  example.inputIds.resize(attended);
  example.tokenTypeIds.resize(attended);
}

/// Parses one JSONL line into `example`; `where` is "FILE:LINE" for errors.
void parseRow(std::string_view line, const std::string &where, const DataLimits &limits,
              Example &example) {
  auto fail = [&](const std::string &what) { return DataError(where + ": " + what); };
  nlohmann::json row = parseJsonLine<DataError>(line, where);
  if (!row.is_object())
    throw fail("a row must be a JSON object, got " + std::string(row.type_name()));

  // Reads key `name` as an integer array with values in [0, bound).
  auto readIds = [&](const char *name, int64_t bound, const char *boundName,
                     std::vector<int32_t> &out) {
    const nlohmann::json &array = row[name];
    if (!array.is_array())
      throw fail(std::string("'") + name + "' must be an array of integers, got " +
                 array.type_name());
    if (array.empty())
      throw fail(std::string("'") + name + "' is empty");
    out.clear();
    for (size_t i = 0; i < array.size(); ++i) {
      int64_t id;
      std::string element = std::string(name) + "[" + std::to_string(i) + "]";
      if (!readInteger(array[i], id))
        throw fail(element + " must be an integer, got " + array[i].dump());
      if (id < 0 || id >= bound)
        throw fail(element + " = " + std::to_string(id) + " is outside the " + boundName + " [0, " +
                   std::to_string(bound) + ")");
      out.push_back(int32_t(id));
    }
  };

  if (!row.contains("input_ids"))
    throw fail("missing key 'input_ids'");
  readIds("input_ids", limits.vocab, "vocabulary", example.inputIds);
  if (row.contains("token_type_ids")) {
    readIds("token_type_ids", limits.typeVocab, "token type vocabulary", example.tokenTypeIds);
    if (row["token_type_ids"].size() != row["input_ids"].size())
      throw fail("'token_type_ids' has " + std::to_string(row["token_type_ids"].size()) +
                 " entries, 'input_ids' has " + std::to_string(row["input_ids"].size()));
  } else {
    example.tokenTypeIds.assign(example.inputIds.size(), 0);
  }
  if (row.contains("attention_mask"))
    dropPadding(row["attention_mask"], fail, example);
  // A pre-tokenized row is used as given: cutting it would drop its final [SEP].
  if (int64_t(example.inputIds.size()) > limits.seqLen)
    throw fail("'input_ids' has " + std::to_string(example.inputIds.size()) +
               " tokens, more than seq_len " + std::to_string(limits.seqLen) +
               " (tokenize with truncation to max_length=" + std::to_string(limits.seqLen) + ")");

  if (!row.contains("label"))
    throw fail("missing key 'label'");
  if (limits.numLabels == 1) {
    const nlohmann::json &target = row["label"];
    if (!target.is_number() || !std::isfinite(target.get<double>()))
      throw fail("'label' must be a finite number (a regression target), got " + target.dump());
    if (std::fabs(target.get<double>()) > std::numeric_limits<float>::max())
      throw fail("'label' " + target.dump() + " is beyond a float's range (3.4e38 in magnitude)");
    example.label = 0;
    example.target = target.get<float>();
    return;
  }
  int64_t label;
  if (!readInteger(row["label"], label))
    throw fail("'label' must be an integer, got " + row["label"].dump());
  if (label < 0 || label >= limits.numLabels)
    throw fail("label " + std::to_string(label) + " is outside [0, " +
               std::to_string(limits.numLabels) + ")");
  example.label = int32_t(label);
}

/// The model inputs a batcher fills, by InputSlot name.
enum class ModelInput : uint8_t { InputIds, TokenTypeIds, PositionIds, AttentionMask };

std::optional<ModelInput> modelInputNamed(std::string_view name) {
  if (name == "input_ids")
    return ModelInput::InputIds;
  if (name == "token_type_ids")
    return ModelInput::TokenTypeIds;
  if (name == "position_ids")
    return ModelInput::PositionIds;
  if (name == "attention_mask")
    return ModelInput::AttentionMask;
  return std::nullopt;
}

ModelInput knownInput(const InputSlot &slot) {
  std::optional<ModelInput> input = modelInputNamed(slot.name);
  if (!input)
    throw DataError(std::string("the trainer reads an input named '") + slot.name +
                    "', which this runtime does not fill: build the trainer and the runtime "
                    "from one bertc");
  return *input;
}

} // namespace

void requireKnownInputs(const InputSlots &slots) {
  for (size_t i = 0; i < slots.numModel; ++i)
    knownInput(slots.model[i]);
}

Dataset loadJsonlDataset(const std::string &path, const DataLimits &limits) {
  std::string text = readWholeFile<DataError>(path, kDataFileLimit);
  Dataset data{path, {}, limits.numLabels == 1 ? LabelKind::Target : LabelKind::Class};
  forEachLine(text, [&](int64_t lineNumber, std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      return;
    Example example;
    parseRow(line, path + ":" + std::to_string(lineNumber), limits, example);
    data.rows.push_back(std::move(example));
  });
  if (data.rows.empty())
    throw DataError(path + ": no rows");
  return data;
}

uint64_t datasetFingerprint(const Dataset &data) {
  uint64_t hash = 0xcbf29ce484222325u; // FNV-1a offset basis
  auto mix = [&](int64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= uint64_t(value) >> (8 * byte) & 0xFFu;
      hash *= 0x100000001b3u; // FNV prime
    }
  };
  for (const Example &row : data.rows) {
    mix(int64_t(row.inputIds.size()));
    for (size_t t = 0; t < row.inputIds.size(); ++t) {
      mix(row.inputIds[t]);
      mix(row.tokenTypeIds[t]);
    }
    mix(row.label);
    // The other kinds' labels too; a classification set hashes as it always has.
    if (data.labels == LabelKind::Target) {
      uint32_t bits;
      std::memcpy(&bits, &row.target, sizeof bits);
      mix(bits);
    }
    if (data.labels == LabelKind::Span)
      mix(row.endPosition);
    for (int32_t label : row.tokenLabels)
      mix(label);
  }
  return hash;
}

Batcher::Batcher(const Dataset &data, int64_t microBatch, bool shuffle, uint64_t seed,
                 int64_t lengthGroupBatch)
    : data_(data), microBatch_(microBatch), shuffle_(shuffle), seed_(seed),
      lengthGroupBatch_(lengthGroupBatch), order_(data.rows.size()), cursor_(data.rows.size()) {}

int64_t Batcher::batchesPerEpoch() const {
  return (int64_t(data_.rows.size()) + microBatch_ - 1) / microBatch_;
}

int64_t Batcher::rowsInNext(int64_t microBatches) const {
  size_t remaining = cursor_ >= order_.size() ? order_.size() : order_.size() - cursor_;
  return int64_t(std::min(remaining, size_t(microBatches * microBatch_)));
}

/// Builds the visiting order of `epoch`, a function of (seed, epoch) alone:
/// 1. file order;
/// 2. when shuffling, a Fisher–Yates shuffle whose swaps come from the counter-based
///    generator keyed by (seed, epoch, position);
/// 3. when grouping by length, groupByLength() on the result.
void Batcher::startEpoch(int64_t epoch) {
  epoch_ = epoch;
  cursor_ = 0;
  std::iota(order_.begin(), order_.end(), size_t(0));
  if (shuffle_) {
    for (size_t i = order_.size() - 1; i > 0; --i) {
      uint32_t bits = philox4x32(uint32_t(i), uint32_t(uint64_t(i) >> 32), uint32_t(epoch_),
                                 kShuffleStream, uint32_t(seed_), uint32_t(seed_ >> 32));
      size_t j = size_t((uint64_t(bits) * (i + 1)) >> 32); // uniform in [0, i]
      std::swap(order_[i], order_[j]);
    }
  }
  if (lengthGroupBatch_ > 0)
    groupByLength();
}

/// Hugging Face's LengthGroupedSampler (get_length_grouped_indices) on the epoch's order:
/// consecutive mega-batches of mega_batch_mult effective batches, each sorted longest first
/// by a stable sort, so rows of one length keep their shuffled order and the result is a
/// function of (seed, epoch) and the effective batch, not of the micro-batch. Micro-batches
/// are then cut from the sorted order as usual, so each holds rows of similar length; every
/// row still appears once.
void Batcher::groupByLength() {
  const int64_t rows = int64_t(order_.size());
  const int64_t batches = std::clamp<int64_t>(rows / (4 * lengthGroupBatch_), 1, kMegaBatchFactor);
  const size_t megaBatch = size_t(batches * lengthGroupBatch_);
  auto longerFirst = [&](size_t a, size_t b) {
    return data_.rows[a].inputIds.size() > data_.rows[b].inputIds.size();
  };
  for (size_t begin = 0; begin < order_.size(); begin += megaBatch) {
    auto first = order_.begin() + std::ptrdiff_t(begin);
    std::stable_sort(first, first + std::ptrdiff_t(std::min(megaBatch, order_.size() - begin)),
                     longerFirst);
  }
}

BatcherState Batcher::state() const { return BatcherState{epoch_, int64_t(cursor_), tokens_}; }

void Batcher::restore(const BatcherState &state) {
  if (state.epoch < 0 || state.cursor < 0 || size_t(state.cursor) > order_.size() ||
      (state.epoch == 0 && state.cursor != 0))
    throw DataError(data_.path + ": cannot continue at epoch " + std::to_string(state.epoch) +
                    ", row " + std::to_string(state.cursor) + ": the data has only " +
                    std::to_string(order_.size()) + " rows");
  tokens_ = state.tokens;
  if (state.epoch == 0) {
    epoch_ = 0;
    cursor_ = order_.size();
    return;
  }
  startEpoch(state.epoch);
  cursor_ = size_t(state.cursor);
}

int64_t Batcher::lossItemsInNext(int64_t microBatches) {
  if (data_.labels != LabelKind::TokenClass)
    return rowsInNext(microBatches);
  if (cursor_ >= order_.size())
    startEpoch(epoch_ + 1);
  size_t end = std::min(order_.size(), cursor_ + size_t(microBatches * microBatch_));
  int64_t labelled = 0;
  for (size_t at = cursor_; at < end; ++at)
    for (int32_t label : data_.rows[order_[at]].tokenLabels)
      labelled += label != kIgnoredLabel;
  return std::max<int64_t>(labelled, 1);
}

/// Writes the labels of `example`, row `r` of a micro-batch padded to `seq` tokens.
static void writeLabels(const Example &example, LabelKind kind, std::byte *slot, size_t r,
                        size_t seq) {
  auto *labels = reinterpret_cast<int32_t *>(slot);
  switch (kind) {
  case LabelKind::Class:
    labels[r] = example.label;
    return;
  case LabelKind::Target:
    reinterpret_cast<float *>(slot)[r] = example.target;
    return;
  case LabelKind::Span:
    labels[2 * r] = example.label;
    labels[2 * r + 1] = example.endPosition;
    return;
  case LabelKind::TokenClass:
    for (size_t t = 0; t < seq; ++t)
      labels[r * seq + t] = t < example.tokenLabels.size() ? example.tokenLabels[t] : kIgnoredLabel;
    return;
  }
}

MicroBatch Batcher::take() {
  if (cursor_ >= order_.size())
    startEpoch(epoch_ + 1);
  size_t first = cursor_;
  size_t count = std::min(order_.size() - first, size_t(microBatch_));
  cursor_ += count;

  size_t seq = size_t(data_.paddedLength), realTokens = 0;
  for (size_t r = 0; r < count; ++r) {
    seq = std::max(seq, data_.rows[order_[first + r]].inputIds.size());
    realTokens += data_.rows[order_[first + r]].inputIds.size();
  }
  tokens_ += TokenCounts{int64_t(realTokens), int64_t(count * seq)};
  return MicroBatch{int64_t(count), int64_t(seq), epoch_, cursor_ >= order_.size(),
                    int64_t(realTokens)};
}

void Batcher::skipSteps(int64_t steps, int64_t accumulation) {
  for (int64_t step = 0; step < steps; ++step)
    for (int64_t micro = 0; micro < accumulation; ++micro)
      if (take().endsEpoch)
        break;
}

MicroBatch Batcher::next(std::byte *arena, const InputSlots &slots) {
  MicroBatch batch = take();
  size_t count = size_t(batch.rows), seq = size_t(batch.seq), first = cursor_ - count;
  for (size_t i = 0; i < slots.numModel; ++i) {
    ModelInput input = knownInput(slots.model[i]);
    auto *values = reinterpret_cast<int32_t *>(arena + slots.model[i].offset);
    for (size_t r = 0; r < count; ++r) {
      const Example &example = data_.rows[order_[first + r]];
      size_t length = example.inputIds.size();
      for (size_t t = 0; t < seq; ++t) {
        bool real = t < length;
        int32_t &value = values[r * seq + t];
        switch (input) {
        case ModelInput::InputIds:
          value = real ? example.inputIds[t] : data_.padId;
          break;
        case ModelInput::TokenTypeIds:
          value = real ? example.tokenTypeIds[t] : 0;
          break;
        case ModelInput::PositionIds:
          value = real && !example.positionIds.empty() ? example.positionIds[t] : int32_t(t);
          break;
        case ModelInput::AttentionMask:
          value = !real ? 0 : example.documentIds.empty() ? 1 : example.documentIds[t];
          break;
        }
      }
    }
  }
  for (size_t r = 0; r < count; ++r)
    writeLabels(data_.rows[order_[first + r]], data_.labels, arena + slots.labels, r, seq);
  return batch;
}

} // namespace bertc

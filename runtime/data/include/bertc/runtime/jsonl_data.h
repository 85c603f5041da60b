// Pre-tokenized JSONL training data and the batcher that feeds it to the step functions.
// One row per line: {"input_ids": [101, ...], "token_type_ids": [...] (optional), "label": 1}.
// The batcher walks epochs (file order, or a per-epoch permutation keyed by the seed),
// optionally groups rows of similar length, pads each micro-batch to its longest row, writes
// the int32 inputs into the arena and counts real versus padded tokens.
#pragma once

#include "bertc/abi/trainer.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace bertc {

/// A data file that cannot be used; what() reads "FILE:LINE: message" (or "FILE: message").
class DataError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What a row must respect: rows longer than seqLen are truncated to it; labels, token ids
/// and token types outside [0, numLabels), [0, vocab), [0, typeVocab) are errors. With
/// numLabels == 1 the label is a regression target, any finite number (Hugging Face's
/// num_labels = 1).
struct DataLimits {
  int64_t seqLen;
  int64_t numLabels;
  int64_t vocab;
  int64_t typeVocab;
  /// The input id batches are padded with (the model's pad_token_id): a tokenizer's [PAD]
  /// must be this id.
  int64_t padId = 0;
};

/// Which of an Example's labels a dataset fills, and so what the batcher writes into the
/// labels slot (see InputSlots::labels).
enum class LabelKind : uint8_t {
  Class,      ///< `label` per row, int32
  Target,     ///< `target` per row, fp32
  Span,       ///< `label` (start) and `endPosition` per row, int32
  TokenClass, ///< `tokenLabels` per token, int32, -100 (and padding) ignored
};

/// Label of a token that has none: PyTorch's CrossEntropyLoss ignore_index.
constexpr int32_t kIgnoredLabel = -100;

/// One training row (no longer than seqLen).
struct Example {
  std::vector<int32_t> inputIds;
  std::vector<int32_t> tokenTypeIds; ///< same length as inputIds (zeros when absent)
  int32_t label;                     ///< the class; a span's start position
  int32_t endPosition = 0;           ///< a span's end position
  float target = 0.0f;               ///< a regression target
  std::vector<int32_t> tokenLabels;  ///< a class per token (kIgnoredLabel where none)
  /// A packed row of several documents: each token's position in its document and its
  /// document's 1-based index (the attention mask a causal model reads as document ids).
  /// Empty for a row of one document (positions 0.., mask 1).
  std::vector<int32_t> positionIds;
  std::vector<int32_t> documentIds;
};

/// A loaded dataset.
struct Dataset {
  std::string path;
  std::vector<Example> rows;
  LabelKind labels = LabelKind::Class;
  /// Tokens every micro-batch is padded to; 0: its longest row. A span loss is a softmax over
  /// every position, padding included (as in Hugging Face's BertForQuestionAnswering), so
  /// span rows are padded to seq_len, as run_qa.py pads them, and a row's loss does not
  /// depend on the rows it shares a micro-batch with.
  int64_t paddedLength = 0;
  /// The input id of padding (DataLimits::padId).
  int32_t padId = 0;
};

/// Reads every row of the JSONL file at `path` (blank lines are skipped). Throws DataError
/// naming file:line for malformed JSON, a missing key, a wrong type or an out-of-range value,
/// and naming the file when it cannot be opened or holds no rows.
Dataset loadJsonlDataset(const std::string &path, const DataLimits &limits);

/// A 64-bit FNV-1a hash of every row (ids, token types, label) in order: a checkpoint
/// records it so that a resume on different data is refused.
uint64_t datasetFingerprint(const Dataset &data);

/// Where one micro-batch came from and how big it is.
struct MicroBatch {
  int64_t rows;       ///< rows in this micro-batch (the last of an epoch may be smaller)
  int64_t seq;        ///< tokens per row: the longest row (or the dataset's paddedLength)
  int64_t epoch;      ///< 1-based epoch the rows belong to
  bool endsEpoch;     ///< whether this is the epoch's last micro-batch
  int64_t realTokens; ///< tokens that are not padding (of rows * seq computed)
};

/// Tokens the batches held: real ones and computed ones (rows x padded length).
struct TokenCounts {
  int64_t real = 0;
  int64_t computed = 0;

  /// The share of computed tokens that were padding; 0 before any token.
  double padFraction() const {
    return computed == 0 ? 0.0 : double(computed - real) / double(computed);
  }
  TokenCounts &operator+=(const TokenCounts &other) {
    real += other.real;
    computed += other.computed;
    return *this;
  }
};

/// Throws DataError when `slots` names a model input no Batcher fills.
void requireKnownInputs(const InputSlots &slots);

/// Where a batcher stands: enough to rebuild it exactly, since an epoch's order is a
/// function of (seed, epoch).
struct BatcherState {
  int64_t epoch = 0;  ///< 1-based epoch of the last batch; 0 before the first
  int64_t cursor = 0; ///< rows of that epoch already yielded
  TokenCounts tokens; ///< counted over every batch yielded so far
};

/// Endless stream of micro-batches over a dataset, epoch after epoch.
class Batcher {
public:
  /// `microBatch` rows per batch; with `shuffle`, epoch e visits the rows in a permutation
  /// that depends only on (seed, e), otherwise in file order. With a `lengthGroupBatch` (the
  /// effective batch, [train] batch), that order is cut into mega-batches of
  /// min(rows / (4 lengthGroupBatch), 50) (at least 1) effective batches, each sorted by
  /// length, longest first, rows of one length in the order they had (Hugging Face's
  /// LengthGroupedSampler), so a micro-batch holds rows of similar length and little
  /// padding, and the order is the same however the batch is split into micro-batches.
  Batcher(const Dataset &data, int64_t microBatch, bool shuffle, uint64_t seed,
          int64_t lengthGroupBatch = 0);

  /// The most effective batches a mega-batch of length grouping holds (Hugging Face's
  /// mega_batch_mult).
  static constexpr int64_t kMegaBatchFactor = 50;

  /// Writes the next micro-batch into the arena at `slots`, densely as [rows, seq] int32,
  /// each of the model's inputs by its name: input ids (the dataset's padId for padding),
  /// token types (0 for padding), position ids 0..seq-1, attention mask (1 for real
  /// tokens, 0 for padding), a packed row's positions and document ids as its Example
  /// holds them; and the labels the dataset's LabelKind names: classes [rows],
  /// targets [rows], (start, end) [rows, 2] or token classes [rows, seq] (kIgnoredLabel
  /// for padding). Throws DataError for an input it does not know (requireKnownInputs).
  MicroBatch next(std::byte *arena, const InputSlots &slots);

  /// Moves past `steps` optimizer steps as the trainer takes them (`accumulation`
  /// micro-batches each, a step ending early at the end of an epoch), counting their tokens
  /// without writing a batch: where a run stands after those steps.
  void skipSteps(int64_t steps, int64_t accumulation);

  /// Rows the next `microBatches` calls of next() will yield, stopping at the end of the
  /// epoch: the loss normalizer of an optimizer step, known before its first micro-batch.
  int64_t rowsInNext(int64_t microBatches) const;

  /// The loss normalizer of the next `microBatches` calls of next(): their labelled tokens
  /// (at least 1) for token classification, as Hugging Face's Trainer averages over the
  /// items of the whole batch, else rowsInNext(). Starts the next epoch early when the
  /// current one is done, which yields the same batches.
  int64_t lossItemsInNext(int64_t microBatches);

  /// Micro-batches per epoch: ceil(rows / microBatch).
  int64_t batchesPerEpoch() const;

  /// The position and token counts, for a checkpoint.
  BatcherState state() const;
  /// Continues from `state` as if this batcher had yielded those batches itself: rebuilds
  /// the epoch's order and moves to the cursor. Throws DataError when the cursor lies
  /// beyond the data.
  void restore(const BatcherState &state);

private:
  /// Moves past the next micro-batch and counts its tokens: next() without the writes.
  MicroBatch take();
  void startEpoch(int64_t epoch);
  void groupByLength();

  const Dataset &data_;
  int64_t microBatch_;
  bool shuffle_;
  uint64_t seed_;
  int64_t lengthGroupBatch_;  ///< 0: no grouping by length
  std::vector<size_t> order_; ///< row indices of the current epoch, in visiting order
  size_t cursor_ = 0;         ///< position in order_ of the next row
  int64_t epoch_ = 0;         ///< 1-based current epoch; 0 before the first batch
  TokenCounts tokens_;        ///< over every batch yielded
};

} // namespace bertc

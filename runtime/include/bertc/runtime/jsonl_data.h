// Pre-tokenized JSONL training data and the batcher that feeds it to the step functions.
// One row per line: {"input_ids": [101, ...], "token_type_ids": [...] (optional), "label": 1}.
// The batcher walks epochs (file order, or a per-epoch permutation keyed by the seed), pads
// each micro-batch to its longest row and writes the int32 inputs into the arena.
#pragma once

#include "bertc/runtime/trainer_plan.h"

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
/// and token types outside [0, numLabels), [0, vocab), [0, typeVocab) are errors.
struct DataLimits {
  int64_t seqLen;
  int64_t numLabels;
  int64_t vocab;
  int64_t typeVocab;
};

/// One training row (already truncated to seqLen).
struct Example {
  std::vector<int32_t> inputIds;
  std::vector<int32_t> tokenTypeIds; ///< same length as inputIds (zeros when absent)
  int32_t label;
};

/// A loaded dataset.
struct Dataset {
  std::string path;
  std::vector<Example> rows;
};

/// Reads every row of the JSONL file at `path` (blank lines are skipped). Throws DataError
/// naming file:line for malformed JSON, a missing key, a wrong type or an out-of-range value,
/// and naming the file when it cannot be opened or holds no rows.
Dataset loadJsonlDataset(const std::string &path, const DataLimits &limits);

/// Where one micro-batch came from and how big it is.
struct MicroBatch {
  int64_t rows;        ///< rows in this micro-batch (the last of an epoch may be smaller)
  int64_t seq;         ///< tokens per row: the longest row of this micro-batch
  int64_t epoch;       ///< 1-based epoch the rows belong to
  bool endsEpoch;      ///< whether this is the epoch's last micro-batch
};

/// Endless stream of micro-batches over a dataset, epoch after epoch.
class Batcher {
public:
  /// `microBatch` rows per batch; with `shuffle`, epoch e visits the rows in a permutation
  /// that depends only on (seed, e), otherwise in file order.
  Batcher(const Dataset &data, int64_t microBatch, bool shuffle, uint64_t seed);

  /// Writes the next micro-batch into the arena at `slots`, densely as [rows, seq] int32:
  /// input ids (0 for padding), token types (0 for padding), position ids 0..seq-1,
  /// attention mask (1 for real tokens, 0 for padding) and labels [rows].
  MicroBatch next(std::byte *arena, const InputSlots &slots);

  /// Rows the next `microBatches` calls of next() will yield, stopping at the end of the
  /// epoch: the loss normalizer of an optimizer step, known before its first micro-batch.
  int64_t rowsInNext(int64_t microBatches) const;

  /// Micro-batches per epoch: ceil(rows / microBatch).
  int64_t batchesPerEpoch() const;

private:
  void startEpoch();

  const Dataset &data_;
  int64_t microBatch_;
  bool shuffle_;
  uint64_t seed_;
  std::vector<size_t> order_; ///< row indices of the current epoch, in visiting order
  size_t cursor_ = 0;         ///< position in order_ of the next row
  int64_t epoch_ = 0;         ///< 1-based current epoch; 0 before the first batch
};

} // namespace bertc

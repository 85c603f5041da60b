// JSONL data: good rows (defaults, a tokenizer's padding dropped, blank lines), one error per
// kind of bad row
// (each must say file:line), and the batcher's padding, file order, seeded shuffle, length
// grouping, token counts, and exact continuation from a saved state.
#include "bertc/runtime/jsonl_data.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;

constexpr DataLimits kLimits = {/*seqLen=*/6, /*numLabels=*/3, /*vocab=*/200,
                                /*typeVocab=*/2};

/// An arena holding the batcher's inputs for up to 32 rows of 32 tokens, and its slots.
struct InputArena {
  static constexpr size_t kTokens = 32 * 32 * sizeof(int32_t);
  static constexpr size_t inputIds = 0, tokenTypeIds = kTokens, positionIds = 2 * kTokens,
                          attentionMask = 3 * kTokens, labels = 4 * kTokens;
  static constexpr InputSlot kInputs[] = {{"input_ids", inputIds},
                                          {"token_type_ids", tokenTypeIds},
                                          {"position_ids", positionIds},
                                          {"attention_mask", attentionMask}};
  std::vector<std::byte> bytes = std::vector<std::byte>(5 * kTokens);
  InputSlots slots{kInputs, 4, labels, 0};

  std::vector<int32_t> read(size_t offset, size_t count) const {
    const auto *values = reinterpret_cast<const int32_t *>(bytes.data() + offset);
    return std::vector<int32_t>(values, values + count);
  }
};

/// A file of `rows` rows whose label is the row index (numLabels must exceed `rows`).
Dataset indexedDataset(const ScratchDir &dir, int rows) {
  std::string text;
  for (int i = 0; i < rows; ++i)
    text += R"({"input_ids": [101, )" + std::to_string(i) + R"(, 102], "label": )" +
            std::to_string(i) + "}\n";
  testing::writeText(dir.file("indexed.jsonl"), text);
  return loadJsonlDataset(dir.file("indexed.jsonl"), {8, rows, 200, 2});
}

/// `rows` rows of 1..16 tokens in a scrambled pattern; the label is the row index.
Dataset mixedLengthDataset(const ScratchDir &dir, int rows) {
  std::string text;
  for (int i = 0; i < rows; ++i) {
    std::string ids = "101";
    for (int t = 1, length = 1 + (i * 7 + i / 5) % 16; t < length; ++t)
      ids += ", " + std::to_string((i + t) % 200);
    text += R"({"input_ids": [)" + ids + R"(], "label": )" + std::to_string(i) + "}\n";
  }
  testing::writeText(dir.file("mixed.jsonl"), text);
  return loadJsonlDataset(dir.file("mixed.jsonl"), {32, rows, 200, 2});
}

/// Labels of every row the batcher yields over `epochs` epochs, one vector per epoch.
std::vector<std::vector<int32_t>> visitOrder(Batcher &batcher, int epochs) {
  InputArena arena;
  std::vector<std::vector<int32_t>> order(epochs);
  for (int e = 0; e < epochs; ++e) {
    for (MicroBatch batch{}; !batch.endsEpoch;) {
      batch = batcher.next(arena.bytes.data(), arena.slots);
      EXPECT_EQ(batch.epoch, e + 1);
      std::vector<int32_t> labels = arena.read(arena.slots.labels, size_t(batch.rows));
      order[e].insert(order[e].end(), labels.begin(), labels.end());
    }
  }
  return order;
}

TEST(JsonlData, ReadsGoodRows) {
  ScratchDir dir;
  std::string path = dir.file("train.jsonl");
  testing::writeText(path,
                     R"({"input_ids": [101, 7, 102], "label": 2})"
                     "\n\n   \n"
                     R"({"input_ids": [101, 8, 9, 102], "token_type_ids": [0, 0, 1, 1], )"
                     R"("label": 0, "text": "ignored"})"
                     "\r\n"
                     R"({"input_ids": [1, 2, 3, 4, 5, 6, 0, 0], "attention_mask": )"
                     R"([1, 1, 1, 1, 1, 1, 0, 0], "token_type_ids": [0, 0, 0, 1, 1, 1, 0, 0], )"
                     R"("label": 1})"
                     "\n"
                     R"({"input_ids": [5, 6, 0], "attention_mask": [true, true, false], )"
                     R"("label": 2})");
  Dataset data = loadJsonlDataset(path, kLimits);
  ASSERT_EQ(data.rows.size(), 4u);
  EXPECT_EQ(data.rows[0].inputIds, (std::vector<int32_t>{101, 7, 102}));
  EXPECT_EQ(data.rows[0].tokenTypeIds, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(data.rows[0].label, 2);
  EXPECT_EQ(data.rows[1].tokenTypeIds, (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(data.rows[1].label, 0);
  // Padded by a tokenizer to 8, longer than seqLen (6): the tokens its mask attends to.
  EXPECT_EQ(data.rows[2].inputIds, (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(data.rows[2].tokenTypeIds, (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
  // A mask of booleans reads as one of 1s and 0s.
  EXPECT_EQ(data.rows[3].inputIds, (std::vector<int32_t>{5, 6}));
}

struct BadRow {
  std::string row;
  std::string message;
};

class JsonlBadRow : public ::testing::TestWithParam<BadRow> {};

TEST_P(JsonlBadRow, ErrorNamesFileAndLine) {
  ScratchDir dir;
  std::string path = dir.file("train.jsonl");
  testing::writeText(path, std::string(R"({"input_ids": [101, 102], "label": 1})") + "\n" +
                               GetParam().row + "\n");
  std::string error = errorOf([&] { loadJsonlDataset(path, kLimits); });
  EXPECT_EQ(error.rfind(path + ":2: " + GetParam().message, 0), 0u) << error;
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, JsonlBadRow,
    ::testing::Values(
        BadRow{R"({"input_ids": [101, 102], "label": 1)", "malformed JSON: "},
        BadRow{R"({"input_ids": [101, 102], "label": )" + std::string(100000, '[') + "]}",
               "column 99: nesting deeper than 64 levels"},
        BadRow{R"({"input_ids": [101, 1e400], "label": 1})",
               "column 21: number 1e400 is out of range"},
        BadRow{"[101, 102]", "a row must be a JSON object, got array"},
        BadRow{R"({"label": 1})", "missing key 'input_ids'"},
        BadRow{R"({"input_ids": "101 102", "label": 1})",
               "'input_ids' must be an array of integers, got string"},
        BadRow{R"({"input_ids": [], "label": 1})", "'input_ids' is empty"},
        BadRow{R"({"input_ids": [101, 1.5], "label": 1})",
               "input_ids[1] must be an integer, got 1.5"},
        BadRow{R"({"input_ids": [101, 200], "label": 1})",
               "input_ids[1] = 200 is outside the vocabulary [0, 200)"},
        BadRow{R"({"input_ids": [-1], "label": 1})",
               "input_ids[0] = -1 is outside the vocabulary [0, 200)"},
        BadRow{R"({"input_ids": [101, 102], "token_type_ids": [0, 2], "label": 1})",
               "token_type_ids[1] = 2 is outside the token type vocabulary [0, 2)"},
        BadRow{R"({"input_ids": [101, 102], "token_type_ids": [0], "label": 1})",
               "'token_type_ids' has 1 entries, 'input_ids' has 2"},
        BadRow{R"({"input_ids": [1, 2, 3, 4, 5, 6, 7], "label": 1})",
               "'input_ids' has 7 tokens, more than seq_len 6 (tokenize with truncation to "
               "max_length=6)"},
        BadRow{R"({"input_ids": [101, 102, 0], "attention_mask": [1, 1], "label": 1})",
               "'attention_mask' must be an array of 0s and 1s as long as 'input_ids' (3), got 2 "
               "entries"},
        BadRow{R"({"input_ids": [101, 102], "attention_mask": "11", "label": 1})",
               "'attention_mask' must be an array of 0s and 1s as long as 'input_ids' (2), got "
               "string"},
        BadRow{R"({"input_ids": [0, 101, 102], "attention_mask": [0, 1, 1], "label": 1})",
               "attention_mask[1] is 1: bertc reads a mask of 1s then 0s (padding on the right)"},
        BadRow{R"({"input_ids": [101, 102], "attention_mask": [1, 2], "label": 1})",
               "attention_mask[1] is 2: bertc reads a mask of 1s then 0s (padding on the right)"},
        BadRow{R"({"input_ids": [101, 102], "attention_mask": [0, 0], "label": 1})",
               "'attention_mask' attends to no token"},
        BadRow{R"({"input_ids": [101, 102]})", "missing key 'label'"},
        BadRow{R"({"input_ids": [101, 102], "label": "positive"})",
               "'label' must be an integer, got \"positive\""},
        BadRow{R"({"input_ids": [101, 102], "label": 3})", "label 3 is outside [0, 3)"},
        BadRow{R"({"input_ids": [101, 102], "label": -1})", "label -1 is outside [0, 3)"}));

TEST(JsonlData, MissingAndEmptyFilesAreReported) {
  ScratchDir dir;
  std::string missing = dir.file("absent.jsonl");
  std::string error = errorOf([&] { loadJsonlDataset(missing, kLimits); });
  EXPECT_EQ(error.rfind(missing + ": cannot open", 0), 0u) << error;
  std::string empty = dir.file("empty.jsonl");
  testing::writeText(empty, "\n\n");
  EXPECT_EQ(errorOf([&] { loadJsonlDataset(empty, kLimits); }), empty + ": no rows");
}

TEST(Batcher, PadsToTheLongestRowOfTheBatch) {
  ScratchDir dir;
  std::string path = dir.file("train.jsonl");
  testing::writeText(path, R"({"input_ids": [101, 5, 102], "label": 1})"
                           "\n"
                           R"({"input_ids": [101, 6, 7, 8, 102], )"
                           R"("token_type_ids": [0, 0, 0, 1, 1], "label": 2})"
                           "\n"
                           R"({"input_ids": [101, 102], "label": 0})");
  Dataset data = loadJsonlDataset(path, kLimits);
  Batcher batcher(data, /*microBatch=*/3, /*shuffle=*/false, /*seed=*/0);
  InputArena arena;
  MicroBatch batch = batcher.next(arena.bytes.data(), arena.slots);
  EXPECT_EQ(batch.rows, 3);
  EXPECT_EQ(batch.seq, 5);
  EXPECT_EQ(batch.epoch, 1);
  EXPECT_TRUE(batch.endsEpoch);
  // Dense [3 rows, 5 tokens]: each row padded with id 0, mask 0, type 0.
  EXPECT_EQ(arena.read(arena.inputIds, 15),
            (std::vector<int32_t>{101, 5, 102, 0, 0, 101, 6, 7, 8, 102, 101, 102, 0, 0, 0}));
  EXPECT_EQ(arena.read(arena.attentionMask, 15),
            (std::vector<int32_t>{1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(arena.read(arena.tokenTypeIds, 15),
            (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(arena.read(arena.positionIds, 15),
            (std::vector<int32_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
  EXPECT_EQ(arena.read(arena.slots.labels, 3), (std::vector<int32_t>{1, 2, 0}));
  // 3 + 5 + 2 real tokens of 3 x 5 computed.
  EXPECT_EQ(batch.realTokens, 10);
  EXPECT_EQ(batcher.state().tokens.real, 10);
  EXPECT_EQ(batcher.state().tokens.computed, 15);
  EXPECT_DOUBLE_EQ(batcher.state().tokens.padFraction(), 5.0 / 15.0);
}

// A model reads the inputs its family names, in any order: the batcher fills those alone
// (a decoder has no token types) and pads the ids with the dataset's pad id.
TEST(Batcher, FillsTheInputsTheModelNamesAndPadsWithItsPadId) {
  ScratchDir dir;
  std::string path = dir.file("train.jsonl");
  testing::writeText(path, R"({"input_ids": [11, 12, 13], "label": 1})"
                           "\n"
                           R"({"input_ids": [21], "label": 0})");
  Dataset data = loadJsonlDataset(path, kLimits);
  data.padId = 7;
  Batcher batcher(data, /*microBatch=*/2, /*shuffle=*/false, /*seed=*/0);
  InputArena arena;
  std::fill(arena.bytes.begin(), arena.bytes.end(), std::byte{0x55});
  const InputSlot decoderInputs[] = {{"attention_mask", InputArena::attentionMask},
                                     {"input_ids", InputArena::inputIds}};
  InputSlots slots{decoderInputs, 2, InputArena::labels, 0};
  batcher.next(arena.bytes.data(), slots);
  EXPECT_EQ(arena.read(arena.inputIds, 6), (std::vector<int32_t>{11, 12, 13, 21, 7, 7}));
  EXPECT_EQ(arena.read(arena.attentionMask, 6), (std::vector<int32_t>{1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(arena.read(arena.slots.labels, 2), (std::vector<int32_t>{1, 0}));
  // The inputs the model does not read keep their bytes.
  EXPECT_EQ(arena.read(arena.tokenTypeIds, 1), (std::vector<int32_t>{0x55555555}));
  EXPECT_EQ(arena.read(arena.positionIds, 1), (std::vector<int32_t>{0x55555555}));
}

// A trainer reading an input no batcher fills is refused before its first step.
TEST(Batcher, RefusesAnInputItDoesNotFill) {
  const InputSlot inputs[] = {{"input_ids", 0}, {"pixel_values", 64}};
  EXPECT_NO_THROW(requireKnownInputs(InputSlots{inputs, 1, 128, 0}));
  EXPECT_EQ(errorOf([&] { requireKnownInputs(InputSlots{inputs, 2, 128, 0}); }),
            "the trainer reads an input named 'pixel_values', which this runtime does not fill: "
            "build the trainer and the runtime from one bertc");
}

// A dataset with a padded length (span rows, padded to seq_len) pads every micro-batch to it.
TEST(Batcher, PadsToTheDatasetsPaddedLengthWhereItHasOne) {
  ScratchDir dir;
  std::string path = dir.file("train.jsonl");
  testing::writeText(path, R"({"input_ids": [101, 5, 102], "label": 1})"
                           "\n"
                           R"({"input_ids": [101, 102], "label": 0})");
  Dataset data = loadJsonlDataset(path, kLimits);
  data.paddedLength = 4;
  Batcher batcher(data, /*microBatch=*/1, /*shuffle=*/false, /*seed=*/0);
  InputArena arena;
  for (const std::vector<int32_t> &ids :
       {std::vector<int32_t>{101, 5, 102, 0}, std::vector<int32_t>{101, 102, 0, 0}}) {
    MicroBatch batch = batcher.next(arena.bytes.data(), arena.slots);
    EXPECT_EQ(batch.seq, 4);
    EXPECT_EQ(arena.read(arena.inputIds, 4), ids);
  }
}

TEST(Batcher, FileOrderWithoutShuffleAndAPartialLastBatch) {
  ScratchDir dir;
  Dataset data = indexedDataset(dir, 5);
  Batcher batcher(data, /*microBatch=*/2, /*shuffle=*/false, /*seed=*/9);
  EXPECT_EQ(batcher.batchesPerEpoch(), 3);
  InputArena arena;
  // rowsInNext(2) looks ahead two micro-batches but never past the end of the epoch.
  std::vector<int64_t> sizes, lookahead;
  for (int i = 0; i < 4; ++i) {
    lookahead.push_back(batcher.rowsInNext(2));
    sizes.push_back(batcher.next(arena.bytes.data(), arena.slots).rows);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{2, 2, 1, 2}));
  EXPECT_EQ(lookahead, (std::vector<int64_t>{4, 3, 1, 4}));

  Batcher again(data, 2, false, 9);
  std::vector<int32_t> fileOrder = {0, 1, 2, 3, 4};
  auto order = visitOrder(again, 2);
  EXPECT_EQ(order[0], fileOrder);
  EXPECT_EQ(order[1], fileOrder);
}

TEST(Batcher, ShuffleIsASeededPermutationPerEpoch) {
  ScratchDir dir;
  Dataset data = indexedDataset(dir, 20);
  Batcher first(data, 3, /*shuffle=*/true, /*seed=*/42);
  Batcher second(data, 3, /*shuffle=*/true, /*seed=*/42);
  Batcher otherSeed(data, 3, /*shuffle=*/true, /*seed=*/43);
  auto order = visitOrder(first, 3);
  EXPECT_EQ(order, visitOrder(second, 3));
  EXPECT_NE(order, visitOrder(otherSeed, 3));

  std::vector<int32_t> fileOrder(20);
  std::iota(fileOrder.begin(), fileOrder.end(), 0);
  for (const auto &epoch : order) {
    EXPECT_NE(epoch, fileOrder);
    std::vector<int32_t> sorted = epoch;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, fileOrder) << "each epoch visits every row exactly once";
  }
  EXPECT_NE(order[0], order[1]);
  EXPECT_NE(order[1], order[2]);
}

TEST(Batcher, GroupingByLengthVisitsEveryRowOncePerEpoch) {
  ScratchDir dir;
  Dataset data = mixedLengthDataset(dir, 250);
  // Batch 2: mega-batches of min(250 / (4 * 2), 50) = 31 batches, 62 rows, so the epoch has
  // four full ones and one of 2.
  Batcher grouped(data, 2, /*shuffle=*/true, /*seed=*/5, /*lengthGroupBatch=*/2);
  Batcher again(data, 2, /*shuffle=*/true, /*seed=*/5, /*lengthGroupBatch=*/2);
  auto order = visitOrder(grouped, 2);
  EXPECT_EQ(order, visitOrder(again, 2)) << "a function of (seed, epoch)";
  EXPECT_NE(order[0], order[1]);
  std::vector<int32_t> everyRow(250);
  std::iota(everyRow.begin(), everyRow.end(), 0);
  for (const auto &epoch : order) {
    std::vector<int32_t> sorted = epoch;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, everyRow) << "each epoch visits every row exactly once";
    auto length = [&](int32_t row) { return data.rows[size_t(row)].inputIds.size(); };
    for (size_t begin : {0, 62, 124, 186, 248}) {
      auto first = epoch.begin() + std::ptrdiff_t(begin);
      auto last = epoch.begin() + std::ptrdiff_t(std::min<size_t>(begin + 62, 250));
      EXPECT_TRUE(
          std::is_sorted(first, last, [&](int32_t a, int32_t b) { return length(a) > length(b); }))
          << "mega-batch at " << begin << " is sorted longest first";
    }
    // Mega-batches hold shuffled rows, not file order: the first is not rows 0..61.
    EXPECT_NE(std::set<int32_t>(epoch.begin(), epoch.begin() + 62),
              std::set<int32_t>(everyRow.begin(), everyRow.begin() + 62));
  }
}

// The order is the effective batch's: the same in micro-batches of 2 and of 8; and rows of
// one length keep their shuffled order, so the seed still matters where all the rows make
// one mega-batch (8 rows of one length, batch 8: one batch of 8 rows).
TEST(Batcher, GroupingByLengthFollowsTheEffectiveBatchAndTheSeed) {
  ScratchDir dir;
  Dataset data = mixedLengthDataset(dir, 250);
  Batcher small(data, 2, /*shuffle=*/true, /*seed=*/5, /*lengthGroupBatch=*/8);
  Batcher whole(data, 8, /*shuffle=*/true, /*seed=*/5, /*lengthGroupBatch=*/8);
  EXPECT_EQ(visitOrder(small, 2), visitOrder(whole, 2));

  std::string text;
  for (int i = 0; i < 8; ++i)
    text += R"({"input_ids": [101, 7, 102], "label": )" + std::to_string(i) + "}\n";
  testing::writeText(dir.file("same.jsonl"), text);
  Dataset sameLength = loadJsonlDataset(dir.file("same.jsonl"), {32, 8, 200, 2});
  Batcher seed1(sameLength, 8, /*shuffle=*/true, /*seed=*/1, /*lengthGroupBatch=*/8);
  Batcher seed2(sameLength, 8, /*shuffle=*/true, /*seed=*/2, /*lengthGroupBatch=*/8);
  Batcher plain(sameLength, 8, /*shuffle=*/true, /*seed=*/1);
  const auto firstEpoch = visitOrder(seed1, 1);
  EXPECT_NE(firstEpoch, visitOrder(seed2, 1));
  EXPECT_EQ(firstEpoch, visitOrder(plain, 1)) << "one length: the shuffled order";
}

TEST(Batcher, GroupingByLengthCutsPadding) {
  ScratchDir dir;
  Dataset data = mixedLengthDataset(dir, 400);
  auto padFraction = [&](bool groupByLength) {
    Batcher batcher(data, 8, /*shuffle=*/true, /*seed=*/3, groupByLength ? 8 : 0);
    visitOrder(batcher, 1);
    return batcher.state().tokens.padFraction();
  };
  double plain = padFraction(false), grouped = padFraction(true);
  EXPECT_GT(plain, 0.3) << "rows of 1..16 tokens, 8 to a batch, padded to the longest";
  // Mega-batches of min(400 / 32, 50) = 12 batches (96 rows) of lengths 1..16.
  EXPECT_LT(grouped, plain / 4) << "plain shuffling pads " << plain;
}

TEST(Batcher, RestoringAStateContinuesTheSameStream) {
  ScratchDir dir;
  Dataset data = mixedLengthDataset(dir, 23);
  for (bool groupByLength : {false, true}) {
    InputArena arena;
    // Stop mid-epoch 2 (after 8 batches: 6 per epoch), then at an epoch's end (12).
    for (int stop : {8, 12}) {
      Batcher reference(data, 4, true, 11, groupByLength ? 4 : 0);
      for (int i = 0; i < stop; ++i)
        reference.next(arena.bytes.data(), arena.slots);
      BatcherState state = reference.state();
      EXPECT_EQ(state.epoch, 2);
      EXPECT_EQ(state.cursor, stop == 8 ? 8 : 23);
      Batcher resumed(data, 4, true, 11, groupByLength ? 4 : 0);
      resumed.restore(state);
      EXPECT_EQ(resumed.rowsInNext(3), reference.rowsInNext(3));
      for (int i = 0; i < 10; ++i) {
        MicroBatch expected = reference.next(arena.bytes.data(), arena.slots);
        std::vector<int32_t> expectedIds = arena.read(arena.inputIds, 4 * 32);
        MicroBatch actual = resumed.next(arena.bytes.data(), arena.slots);
        EXPECT_EQ(actual.epoch, expected.epoch);
        EXPECT_EQ(actual.rows, expected.rows);
        EXPECT_EQ(actual.seq, expected.seq);
        EXPECT_EQ(arena.read(arena.inputIds, 4 * 32), expectedIds) << "stop " << stop;
      }
      EXPECT_EQ(resumed.state().tokens.computed, reference.state().tokens.computed);
    }
    Batcher fresh(data, 4, true, 11, groupByLength ? 4 : 0);
    Batcher restoredFresh(data, 4, true, 11, groupByLength ? 4 : 0);
    restoredFresh.restore(BatcherState{});
    EXPECT_EQ(visitOrder(restoredFresh, 2), visitOrder(fresh, 2));
  }
  Batcher batcher(data, 4, true, 11);
  EXPECT_EQ(errorOf([&] { batcher.restore({2, 24, {}}); }),
            data.path + ": cannot continue at epoch 2, row 24: the data has only 23 rows");
}

TEST(JsonlData, FingerprintChangesWithAnyRow) {
  ScratchDir dir;
  Dataset data = indexedDataset(dir, 4);
  uint64_t fingerprint = datasetFingerprint(data);
  EXPECT_EQ(fingerprint, datasetFingerprint(indexedDataset(dir, 4)));
  Dataset changed = data;
  changed.rows[2].tokenTypeIds[1] = 1;
  EXPECT_NE(datasetFingerprint(changed), fingerprint);
  changed = data;
  changed.rows[3].label = 0;
  EXPECT_NE(datasetFingerprint(changed), fingerprint);
  changed = data;
  std::swap(changed.rows[0], changed.rows[1]);
  EXPECT_NE(datasetFingerprint(changed), fingerprint);
}

} // namespace
} // namespace bertc

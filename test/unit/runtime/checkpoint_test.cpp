// Checkpoints: the atomic writer (a failed write keeps the previous file and leaves no
// temporary), a checkpoint folder's round trip through a small hand-made plan, mismatch
// errors, and finding the latest complete checkpoint. trainer_state.json's own tests are
// trainer_state_test.cpp's.
#include "bertc/runtime/checkpoint.h"

#include "bertc/runtime/safetensors.h"
#include "bertc/runtime/safetensors_shards.h"
#include "bertc/runtime/save_files.h"
#include "bertc/runtime/tokenizer_config.h"

#include "fifo_input.h"
#include "sample_trainer_state.h"
#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <numeric>

namespace bertc {
namespace {

namespace fs = std::filesystem;
using testing::errorOf;
using testing::expectSameState;
using testing::readText;
using testing::sampleState;
using testing::ScratchDir;

/// Names in `dir`, sorted, hidden ones included.
std::vector<std::string> listing(const std::string &dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// The vocabulary a plan names ("" for none), as the trainer passes it to the writers.
std::string vocabOf(const TrainerPlan &plan) {
  return plan.data.vocabFile ? plan.data.vocabFile : "";
}

TEST(Checkpoint, AtomicWriteReplacesTheFile) {
  ScratchDir dir;
  std::string path = dir.file("state.json");
  writeTextFileAtomically(path, "first");
  writeTextFileAtomically(path, "second");
  EXPECT_EQ(readText(path), "second");
  EXPECT_EQ(listing(dir.file("")), std::vector<std::string>{"state.json"});
}

TEST(Checkpoint, AFailedWriteKeepsThePreviousFileAndNoTemporary) {
  ScratchDir dir;
  std::string path = dir.file("model.safetensors");
  writeTextFileAtomically(path, "previous");
  std::string error = errorOf([&] {
    writeFileAtomically(path, [](const std::string &temporary) {
      testing::writeText(temporary, "half a fi");
      throw std::runtime_error(temporary + ": write failed (disk full?)");
    });
  });
  EXPECT_EQ(error, dir.file(".model.safetensors.tmp") + ": write failed (disk full?)");
  EXPECT_EQ(readText(path), "previous");
  EXPECT_EQ(listing(dir.file("")), std::vector<std::string>{"model.safetensors"});

  std::string missing = dir.file("no/such/dir/config.json");
  EXPECT_EQ(errorOf([&] { writeTextFileAtomically(missing, "{}"); }),
            dir.file("no/such/dir/.config.json.tmp") + ": cannot create: No such file or "
                                                       "directory");
}

/// A small plan: a trainable [2, 3] weight and [2] bias, a frozen [3] LayerNorm weight, and
/// the AdamW moments of the trainable two; 64 floats of arena.
struct SmallPlan {
  ParamSlot params[3] = {
      {"classifier.weight", 2, {2, 3}, 6, 0, true, 0, 64, 96, true, ParamInit::Normal},
      {"classifier.bias", 1, {2}, 2, 32, true, 0, 128, 160, false, ParamInit::Zeros},
      {"bert.embeddings.LayerNorm.weight", 1, {3}, 3, 192, false, 0, 0, 0, false, ParamInit::Ones}};
  TrainerPlan plan{};
  std::vector<float> arena = std::vector<float>(64);

  SmallPlan(const char *vocabFile, const char *config) {
    plan.arenaBytes = arena.size() * sizeof(float);
    plan.params = params;
    plan.numParams = 3;
    plan.data.vocabFile = vocabFile;
    plan.hfConfigJson = config;
  }
  std::byte *bytes() { return reinterpret_cast<std::byte *>(arena.data()); }
};

TEST(Checkpoint, AFolderRoundTripsParametersMomentsAndState) {
  ScratchDir dir;
  std::string vocab = dir.file("vocab.txt");
  testing::writeText(vocab, "[PAD]\n[UNK]\n");
  SmallPlan saved(vocab.c_str(), R"({"model_type": "bert"})");
  std::iota(saved.arena.begin(), saved.arena.end(), 0.5f);
  std::string out = dir.file("run");
  std::string path = saveCheckpoint(out, saved.plan, saved.bytes(), sampleState(),
                                    {vocabOf(saved.plan)}, kDefaultMaxShardBytes);
  EXPECT_EQ(path, out + "/checkpoint-12");
  EXPECT_EQ(listing(out), std::vector<std::string>{"checkpoint-12"});
  EXPECT_EQ(listing(path),
            (std::vector<std::string>{"config.json", "model.safetensors", "optimizer.safetensors",
                                      "trainer_state.json", "vocab.txt"}));
  EXPECT_EQ(readText(path + "/config.json"), "{\"model_type\": \"bert\"}\n");
  EXPECT_EQ(readText(path + "/vocab.txt"), "[PAD]\n[UNK]\n");
  SafetensorsReader optimizer(path + "/optimizer.safetensors");
  EXPECT_EQ(optimizer.entries().size(), 4u) << "moments of the two trainable parameters";
  EXPECT_TRUE(optimizer.contains("classifier.weight.exp_avg_sq"));

  SmallPlan loaded(nullptr, nullptr);
  expectSameState(loadCheckpoint(path, loaded.plan, loaded.bytes()), sampleState());
  for (size_t i : {0, 5, 8, 9, 16, 21, 24, 29, 32, 33, 40, 41, 48, 50})
    EXPECT_EQ(loaded.arena[i], saved.arena[i]) << "float " << i;
  EXPECT_EQ(loaded.arena[6], 0.0f) << "bytes outside every tensor are not written";

  // Saving the same step again replaces the folder and leaves nothing hidden behind.
  saved.arena[0] = -1.0f;
  saveCheckpoint(out, saved.plan, saved.bytes(), sampleState(), {vocabOf(saved.plan)},
                 kDefaultMaxShardBytes);
  EXPECT_EQ(listing(out), std::vector<std::string>{"checkpoint-12"});
  loadCheckpoint(path, loaded.plan, loaded.bytes());
  EXPECT_EQ(loaded.arena[0], -1.0f);
}

// A Conv1D weight (checkpointTransposed): the arena holds [2, 3], the file [3, 2], its
// element (c, r) the arena's (r, c); the moments keep the arena's layout; a resume
// transposes back.
TEST(Checkpoint, ATransposedParameterIsSavedAndResumedAsItsTranspose) {
  ScratchDir dir;
  SmallPlan saved(nullptr, nullptr);
  saved.params[0].checkpointTransposed = true;
  std::iota(saved.arena.begin(), saved.arena.end(), 1.0f); // weight rows {1,2,3}, {4,5,6}
  std::string path =
      saveCheckpoint(dir.file("run"), saved.plan, saved.bytes(), sampleState(), {}, 1 << 20);
  SafetensorsReader model(path + "/model.safetensors");
  EXPECT_EQ(model.entries().at("classifier.weight").shape, (std::vector<int64_t>{3, 2}));
  std::vector<float> stored(6);
  model.readF32("classifier.weight", {3, 2}, stored.data());
  EXPECT_EQ(stored, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  SafetensorsReader optimizer(path + "/optimizer.safetensors");
  EXPECT_EQ(optimizer.entries().at("classifier.weight.exp_avg").shape,
            (std::vector<int64_t>{2, 3}));

  SmallPlan loaded(nullptr, nullptr);
  loaded.params[0].checkpointTransposed = true;
  loadCheckpoint(path, loaded.plan, loaded.bytes());
  EXPECT_EQ(std::vector<float>(loaded.arena.begin(), loaded.arena.begin() + 6),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  SmallPlan untransposed(nullptr, nullptr);
  EXPECT_EQ(errorOf([&] { loadCheckpoint(path, untransposed.plan, untransposed.bytes()); }),
            path + ": checkpoint does not match this trainer: model.safetensors: "
                   "'classifier.weight' is [3,2] in the checkpoint, [2,3] here");
}

// Limit 24 bytes: classifier.weight (24) fills the first shard; classifier.bias (8) and the
// LayerNorm weight (12) make the second, 20 bytes. The resume reads each from its shard.
TEST(Checkpoint, AShardedCheckpointRoundTripsBitForBit) {
  ScratchDir dir;
  SmallPlan saved(nullptr, nullptr);
  std::iota(saved.arena.begin(), saved.arena.end(), 0.25f);
  std::string path =
      saveCheckpoint(dir.file("run"), saved.plan, saved.bytes(), sampleState(), {}, 24);
  EXPECT_EQ(listing(path),
            (std::vector<std::string>{
                "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                "model.safetensors.index.json", "optimizer.safetensors", "trainer_state.json"}));
  nlohmann::json index = nlohmann::json::parse(readText(path + "/model.safetensors.index.json"));
  EXPECT_EQ(index["metadata"]["total_size"], 44);
  EXPECT_EQ(
      index["weight_map"],
      (nlohmann::json{{"classifier.weight", "model-00001-of-00002.safetensors"},
                      {"classifier.bias", "model-00002-of-00002.safetensors"},
                      {"bert.embeddings.LayerNorm.weight", "model-00002-of-00002.safetensors"}}));

  SmallPlan loaded(nullptr, nullptr);
  expectSameState(loadCheckpoint(path, loaded.plan, loaded.bytes()), sampleState());
  for (size_t i : {0, 5, 8, 9, 16, 21, 24, 29, 32, 33, 40, 41, 48, 50})
    EXPECT_EQ(loaded.arena[i], saved.arena[i]) << "float " << i;

  SmallPlan other(nullptr, nullptr);
  other.params[1].shape[0] = 3;
  EXPECT_EQ(errorOf([&] { loadCheckpoint(path, other.plan, other.bytes()); }),
            path + ": checkpoint does not match this trainer: model.safetensors.index.json: "
                   "'classifier.bias' is [2] in the checkpoint, [3] here");
  fs::remove(path + "/model-00002-of-00002.safetensors");
  EXPECT_EQ(errorOf([&] { loadCheckpoint(path, saved.plan, saved.bytes()); }),
            path + "/model.safetensors.index.json: tensor bert.embeddings.LayerNorm.weight: " +
                path + "/model-00002-of-00002.safetensors: cannot open: No such file or directory");
}

TEST(Checkpoint, AModelFolderWithoutConfigOrVocabularyHasTheWeightsOnly) {
  ScratchDir dir;
  std::string vocab = dir.file("absent-vocab.txt");
  SmallPlan plan(vocab.c_str(), "");
  EXPECT_EQ(
      writeModelFolder(dir.file("model"), plan.plan, plan.bytes(), {vocab}, kDefaultMaxShardBytes),
      std::vector<std::string>{"model.safetensors"});
  EXPECT_EQ(listing(dir.file("model")), std::vector<std::string>{"model.safetensors"});
  // Settings without a vocabulary to go with make no tokenizer_config.json either.
  EXPECT_EQ(writeModelFolder(dir.file("model"), plan.plan, plan.bytes(),
                             {vocab, TokenizerSettings{}}, kDefaultMaxShardBytes),
            std::vector<std::string>{"model.safetensors"});
}

// A cased run's folder says so in tokenizer_config.json: without the file Hugging Face's
// BertTokenizerFast would lower-case (its default), and bertc would guess from vocab.txt.
// Read back, the file gives the run's settings.
TEST(Checkpoint, AModelFolderKeepsTheTokenizerSettings) {
  ScratchDir dir;
  std::string vocab = dir.file("vocab.txt");
  testing::writeText(vocab, "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
  SmallPlan plan(vocab.c_str(), "");
  TokenizerSettings cased;
  cased.lowerCase = false;
  cased.chineseChars = false;
  std::string folder = dir.file("model");
  EXPECT_EQ(
      writeModelFolder(folder, plan.plan, plan.bytes(), {vocab, cased}, kDefaultMaxShardBytes),
      (std::vector<std::string>{"model.safetensors", "vocab.txt", "tokenizer_config.json"}));
  EXPECT_EQ(readText(folder + "/tokenizer_config.json"),
            "{\n  \"do_lower_case\": false,\n  \"strip_accents\": null,\n"
            "  \"tokenize_chinese_chars\": false,\n  \"tokenizer_class\": \"BertTokenizer\"\n}\n");
  TokenizerSettings readBack =
      resolveTokenizerSettings(Vocab::load(folder + "/vocab.txt"), TokenizerOverrides{});
  EXPECT_FALSE(readBack.lowerCase); // vocab.txt alone would say uncased
  EXPECT_FALSE(readBack.stripAccents);
  EXPECT_FALSE(readBack.chineseChars);
}

TEST(Checkpoint, AMismatchedCheckpointIsRefusedWithEveryDifference) {
  ScratchDir dir;
  SmallPlan saved(nullptr, nullptr);
  std::string path = saveCheckpoint(dir.file("run"), saved.plan, saved.bytes(), sampleState(),
                                    {vocabOf(saved.plan)}, kDefaultMaxShardBytes);
  SmallPlan other(nullptr, nullptr);
  other.params[1].shape[0] = 3;
  other.params[2].name = "bert.embeddings.LayerNorm.bias";
  EXPECT_EQ(errorOf([&] { loadCheckpoint(path, other.plan, other.bytes()); }),
            path + ": checkpoint does not match this trainer: model.safetensors: "
                   "'bert.embeddings.LayerNorm.bias' is missing; 'classifier.bias' is [2] in "
                   "the checkpoint, [3] here; 'bert.embeddings.LayerNorm.weight' is not in "
                   "this model");
  SmallPlan frozen(nullptr, nullptr);
  frozen.params[1].trainable = false;
  EXPECT_EQ(errorOf([&] { loadCheckpoint(path, frozen.plan, frozen.bytes()); }),
            path + ": checkpoint does not match this trainer: optimizer.safetensors: "
                   "'classifier.bias.exp_avg' is not in this model; "
                   "'classifier.bias.exp_avg_sq' is not in this model");
  fs::remove(path + "/trainer_state.json");
  EXPECT_EQ(errorOf([&] { loadCheckpoint(path, saved.plan, saved.bytes()); }),
            path + "/trainer_state.json: cannot open: No such file or directory");
}

TEST(Checkpoint, FindsTheLatestCompleteCheckpoint) {
  ScratchDir dir;
  std::string out = dir.file("run");
  for (const char *name : {"checkpoint-4", "checkpoint-12", "checkpoint-8",
                           ".checkpoint-16.partial", "checkpoint-9x"}) {
    fs::create_directories(out + "/" + name);
    testing::writeText(out + "/" + name + "/trainer_state.json", "{}");
  }
  fs::create_directories(out + "/checkpoint-20"); // no trainer_state.json: not a checkpoint
  EXPECT_EQ(findCheckpoint(out), out + "/checkpoint-12");
  EXPECT_EQ(findCheckpoint(out + "/checkpoint-8"), out + "/checkpoint-8");

  EXPECT_EQ(errorOf([&] { findCheckpoint(dir.file("absent")); }),
            dir.file("absent") + ": no such checkpoint folder");
  testing::writeText(dir.file("file"), "");
  EXPECT_EQ(errorOf([&] { findCheckpoint(dir.file("file")); }),
            dir.file("file") + ": not a folder");
  EXPECT_EQ(errorOf([&] { findCheckpoint(out + "/checkpoint-20"); }),
            out + "/checkpoint-20: holds neither trainer_state.json nor a checkpoint-N folder "
                  "to resume from");
}

// A re-save of checkpoint-N moves the previous copy aside before renaming the new one into
// place; a crash between the two renames leaves only .checkpoint-N.old. Resuming must find
// that copy (not fall back to an earlier checkpoint), and the next save must not lose it.
TEST(Checkpoint, ACheckpointLeftMidSwapIsRecovered) {
  ScratchDir dir;
  SmallPlan saved(nullptr, nullptr);
  std::string out = dir.file("run");
  TrainerState earlier = sampleState();
  earlier.globalStep = 6;
  saveCheckpoint(out, saved.plan, saved.bytes(), earlier, {}, kDefaultMaxShardBytes);
  std::string latest =
      saveCheckpoint(out, saved.plan, saved.bytes(), sampleState(), {}, kDefaultMaxShardBytes);
  fs::rename(latest, out + "/.checkpoint-12.old");
  EXPECT_EQ(findCheckpoint(out), latest);
  EXPECT_EQ(listing(out), (std::vector<std::string>{"checkpoint-12", "checkpoint-6"}));

  fs::rename(latest, out + "/.checkpoint-12.old");
  EXPECT_EQ(findCheckpoint(latest), latest) << "--resume naming the checkpoint itself";

  // A save interrupted after both renames left a stale copy: it is removed, not restored.
  fs::create_directories(out + "/.checkpoint-12.old");
  EXPECT_EQ(findCheckpoint(out), latest);
  EXPECT_EQ(listing(out), (std::vector<std::string>{"checkpoint-12", "checkpoint-6"}));
}

TEST(Checkpoint, AFailedFolderSaveKeepsThePreviousCopy) {
  ScratchDir dir;
  std::string best = dir.file("best");
  replaceFolderAtomically(best, [](const std::string &partial) {
    writeTextFileAtomically(partial + "/eval_results.json", "first");
  });
  EXPECT_EQ(errorOf([&] {
              replaceFolderAtomically(best, [](const std::string &partial) {
                writeTextFileAtomically(partial + "/eval_results.json", "second");
                throw std::runtime_error("disk full");
              });
            }),
            "disk full");
  EXPECT_EQ(readText(best + "/eval_results.json"), "first");
  EXPECT_EQ(listing(dir.file("")), std::vector<std::string>{"best"});
}

} // namespace
} // namespace bertc

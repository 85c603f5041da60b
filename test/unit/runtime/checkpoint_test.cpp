// Checkpoints: the atomic writer (a failed write keeps the previous file and leaves no
// temporary), trainer_state.json round trip and errors, the resume checks, a checkpoint
// folder's round trip through a small hand-made plan, mismatch errors, and finding the
// latest complete checkpoint.
#include "bertc/runtime/checkpoint.h"

#include "bertc/runtime/safetensors.h"
#include "bertc/runtime/save_files.h"
#include "bertc/runtime/tokenizer_config.h"

#include "fifo_input.h"
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
using testing::readText;
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

TrainerState sampleState() {
  TrainerState state;
  state.globalStep = 12;
  state.maxSteps = 30;
  state.seed = 18446744073709551614u;
  state.batch = 32;
  state.microBatch = 8;
  state.accumulation = 4;
  state.seqLen = 128;
  state.shuffle = true;
  state.groupByLength = true;
  state.lr = 2e-5f;
  state.schedule = LrSchedule::Linear;
  state.warmupSteps = 3;
  state.dataPath = "data/train.jsonl";
  state.dataRows = 300;
  state.dataFingerprint = 0xfedcba9876543210u;
  state.data = {2, 96, {1000, 1536}};
  state.lossScaler = {2048.0f, 7, 5};
  return state;
}

void expectSameState(const TrainerState &a, const TrainerState &b) {
  EXPECT_EQ(formatTrainerState(a), formatTrainerState(b));
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.dataFingerprint, b.dataFingerprint);
  EXPECT_EQ(a.data.cursor, b.data.cursor);
  EXPECT_EQ(a.data.tokens.computed, b.data.tokens.computed);
  EXPECT_EQ(a.lossScaler.scale, b.lossScaler.scale);
  EXPECT_EQ(a.lossScaler.goodStepsInRow, b.lossScaler.goodStepsInRow);
  EXPECT_EQ(a.lossScaler.skipped, b.lossScaler.skipped);
}

TEST(Checkpoint, TrainerStateRoundTrips) {
  TrainerState state = sampleState();
  std::string text = formatTrainerState(state);
  EXPECT_NE(text.find("\"global_step\": 12,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"epoch\": 1.32,"), std::string::npos) << "1 epoch + 96 of 300 rows";
  EXPECT_NE(text.find("\"fingerprint\": \"fedcba9876543210\""), std::string::npos) << text;
  expectSameState(parseTrainerState(text, "state.json"), state);
}

// A file name in Latin-1 (the byte 0xE4 for 'ä') is no UTF-8: it is written as U+FFFD.
TEST(Checkpoint, TrainerStateTakesADataPathThatIsNotUtf8) {
  TrainerState state = sampleState();
  state.dataPath = "daten_\xe4.jsonl";
  TrainerState parsed = parseTrainerState(formatTrainerState(state), "state.json");
  EXPECT_EQ(parsed.dataPath, "daten_\xef\xbf\xbd.jsonl");
  parsed.dataPath = state.dataPath;
  expectSameState(parsed, state);
}

TEST(Checkpoint, TrainerStateErrorsNameTheKey) {
  nlohmann::json json = nlohmann::json::parse(formatTrainerState(sampleState()));
  json["data_position"].erase("cursor");
  EXPECT_EQ(errorOf([&] { parseTrainerState(json.dump(), "ckpt/trainer_state.json"); }),
            "ckpt/trainer_state.json: missing 'data_position/cursor'");
  json = nlohmann::json::parse(formatTrainerState(sampleState()));
  json["seed"] = -1;
  EXPECT_EQ(errorOf([&] { parseTrainerState(json.dump(), "s.json"); }),
            "s.json: 'seed' must be a non-negative integer");
  json["seed"] = 1;
  json["shuffle"] = "yes";
  EXPECT_EQ(errorOf([&] { parseTrainerState(json.dump(), "s.json"); }),
            "s.json: 'shuffle' must be true or false");
  EXPECT_EQ(errorOf([&] {
              parseTrainerState("{\"global_step\": ", "s.json");
            }).rfind("s.json: malformed JSON: parse error at line 1, column 17", 0),
            0u);
  EXPECT_EQ(errorOf([&] { parseTrainerState("[1]", "s.json"); }), "s.json: not a JSON object");
  EXPECT_EQ(errorOf([&] {
              parseTrainerState("{\"global_step\":\n" + std::string(100000, '[') +
                                    std::string(100000, ']') + "}",
                                "s.json");
            }),
            "s.json:2:64: nesting deeper than 64 levels");
  EXPECT_EQ(errorOf([&] { parseTrainerState("{\"global_step\": 1e400}", "s.json"); }),
            "s.json:1:17: number 1e400 is out of range (a double holds at most 1.8e308 in "
            "magnitude)");
}

// Each field must lie in its range and agree with the others: a negative step would train
// from a negative learning rate, a skipped-step count beyond int64 would wrap.
TEST(Checkpoint, TrainerStateFieldsAreCheckedOneByOne) {
  struct Case {
    const char *keys;
    nlohmann::json value;
    std::string expected;
  } cases[] = {
      {"/global_step", -3, "'global_step' must be an integer in [0, 30], got -3"},
      {"/global_step", 31, "'global_step' must be an integer in [0, 30], got 31"},
      {"/max_steps", -1, "'max_steps' must be an integer in [0, 9223372036854775807], got -1"},
      {"/loss_scaler/skipped_steps", 18446744073709551615u,
       "'loss_scaler/skipped_steps' must be an integer in [0, 12], got 18446744073709551615"},
      // At most the 12 - 5 steps that were not skipped, all since the last skip.
      {"/loss_scaler/good_steps_in_row", 8,
       "'loss_scaler/good_steps_in_row' must be an integer in [0, 7], got 8"},
      // 2048 is 65536 halved 5 times; no doubling can follow a skip within 7 good steps,
      // and a scale is a power of two.
      {"/loss_scaler/scale", 4096,
       "'loss_scaler/scale' must be 65536 halved once per skipped step and doubled once per "
       "2000 good steps in a row, which 12 steps with 5 skipped cannot make 4096.0"},
      {"/loss_scaler/scale", 2047.5,
       "'loss_scaler/scale' must be 65536 halved once per skipped step and doubled once per "
       "2000 good steps in a row, which 12 steps with 5 skipped cannot make 2047.5"},
      {"/loss_scaler/scale", 1e300, "'loss_scaler/scale' must be a positive float, got 1e+300"},
      {"/loss_scaler/scale", 0, "'loss_scaler/scale' must be a positive float, got 0"},
      {"/learning_rate", -0.5, "'learning_rate' must be a positive float, got -0.5"},
      // Found by fuzz_trainer_state: it became 0 as a float, which no save could write back.
      {"/learning_rate", 1e-50, "'learning_rate' must be a positive float, got 1e-50"},
      {"/train_batch_size", 0,
       "'train_batch_size' must be an integer in [1, 9223372036854775807], got 0"},
      {"/micro_batch", 64, "'micro_batch' must be an integer in [1, 32], got 64"},
      {"/warmup_steps", 31, "'warmup_steps' must be an integer in [0, 30], got 31"},
      {"/lr_schedule", "cosine",
       "'lr_schedule' must be \"linear\" or \"constant\", got \"cosine\""},
      {"/data/rows", 0, "'data/rows' must be an integer in [1, 9223372036854775807], got 0"},
      {"/data/fingerprint", "-1", "'data/fingerprint' must be hexadecimal (16 digits)"},
      {"/data_position/cursor", 301,
       "'data_position/cursor' must be an integer in [1, 300], got 301"},
      {"/data_position/cursor", 0, "'data_position/cursor' must be an integer in [1, 300], got 0"},
      {"/data_position/epoch", -1, "'data_position/epoch' must be an integer in [1, 12], got -1"},
      // Each step reads rows of one epoch: 12 steps reach epoch 12 at most.
      {"/data_position/epoch", 9223372036854775807,
       "'data_position/epoch' must be an integer in [1, 12], got 9223372036854775807"},
      {"/epoch", 0.5, "'epoch' must be 1.32 (data_position's epoch 2, row 96 of 300), got 0.5"},
      // 300 + 96 rows read, at most 128 tokens each.
      {"/tokens/computed", 50689, "'tokens/computed' must be an integer in [0, 50688], got 50689"},
      {"/tokens/real", 2000, "'tokens/real' must be an integer in [0, 1536], got 2000"},
  };
  for (const Case &c : cases) {
    nlohmann::json json = nlohmann::json::parse(formatTrainerState(sampleState()));
    json[nlohmann::json::json_pointer(c.keys)] = c.value;
    EXPECT_EQ(errorOf([&] { parseTrainerState(json.dump(), "s.json"); }), "s.json: " + c.expected)
        << c.keys;
  }
}

// Before step 1 no data was read: the position and the token counts are 0.
TEST(Checkpoint, AStateBeforeTheFirstStepHasReadNothing) {
  TrainerState state = sampleState();
  state.globalStep = 0;
  state.data = {};
  state.lossScaler = {};
  EXPECT_NO_THROW(parseTrainerState(formatTrainerState(state), "s.json"));
  nlohmann::json json = nlohmann::json::parse(formatTrainerState(state));
  json["tokens"]["computed"] = 1;
  EXPECT_EQ(errorOf([&] { parseTrainerState(json.dump(), "s.json"); }),
            "s.json: 'tokens/computed' must be an integer in [0, 0], got 1");
}

TEST(Checkpoint, AStateFileIsReadUpToItsLimit) {
  ScratchDir dir;
  fs::create_directories(dir.file("checkpoint-1"));
  std::string path = dir.file("checkpoint-1/trainer_state.json");
  testing::writeText(path, "");
  fs::resize_file(path, (1 << 20) + 1);
  TrainerPlan plan{};
  EXPECT_EQ(errorOf([&] { loadCheckpoint(dir.file("checkpoint-1"), plan, nullptr); }),
            path + ": larger than 1 MiB, the limit for a checkpoint's JSON file");
  // A device or a FIFO is no state file (a FIFO's open() would wait for a writer).
  fs::remove(path);
  fs::create_symlink("/dev/zero", path);
  EXPECT_EQ(errorOf([&] { loadCheckpoint(dir.file("checkpoint-1"), plan, nullptr); }),
            path + ": is a character device, not a regular file");
  fs::remove(path);
  testing::FifoInput fifo(path);
  EXPECT_EQ(errorOf([&] { loadCheckpoint(dir.file("checkpoint-1"), plan, nullptr); }),
            path + ": is a FIFO, not a regular file");
}

TEST(Checkpoint, ResumeChecksListEveryDifference) {
  TrainerState saved = sampleState(), current = sampleState();
  current.globalStep = 0; // where training stands is not a setting
  current.maxSteps = 99;
  EXPECT_NO_THROW(checkResumable(saved, current, /*lossScaling=*/true, "ckpt"));
  current.seed = 7;
  current.microBatch = 4;
  current.groupByLength = false;
  current.lr = 5e-5f;
  current.schedule = LrSchedule::Constant;
  current.warmupSteps = 0;
  EXPECT_EQ(errorOf([&] { checkResumable(saved, current, true, "ckpt"); }),
            "ckpt: cannot resume exactly: seed 18446744073709551614 in the checkpoint, 7 "
            "here; micro-batch 8 in the checkpoint, 4 here; group_by_length on in the "
            "checkpoint, off here; learning_rate 2e-05 in the checkpoint, 5e-05 here; "
            "lr_schedule linear in the checkpoint, constant here; warmup_steps 3 in the "
            "checkpoint, 0 here");
  current = sampleState();
  current.dataFingerprint ^= 1;
  EXPECT_EQ(errorOf([&] { checkResumable(saved, current, true, "ckpt"); }),
            "ckpt: cannot resume exactly: the training data's content differs from "
            "data/train.jsonl");
}

// Where the data stands after the checkpoint's step follows from the settings (the caller
// replays its batcher), and so does the loss scaler of a run that does not scale its loss.
TEST(Checkpoint, ResumeChecksTheDataPositionAndTheLossScaler) {
  TrainerState saved = sampleState(), current = sampleState();
  current.data.cursor = 64;
  EXPECT_EQ(errorOf([&] { checkResumable(saved, current, true, "ckpt"); }),
            "ckpt: cannot resume exactly: data_position epoch 2, row 96 in the checkpoint, "
            "epoch 2, row 64 after step 12 here");
  current = sampleState();
  current.data.tokens.computed = 1600;
  EXPECT_EQ(errorOf([&] { checkResumable(saved, current, true, "ckpt"); }),
            "ckpt: cannot resume exactly: tokens 1000 real of 1536 in the checkpoint, 1000 "
            "real of 1600 after step 12 here");
  // The position is compared only once the settings agree: it follows from them.
  current.seed = 7;
  EXPECT_EQ(errorOf([&] { checkResumable(saved, current, true, "ckpt"); }),
            "ckpt: cannot resume exactly: seed 18446744073709551614 in the checkpoint, 7 here");
  current = sampleState();
  EXPECT_EQ(errorOf([&] { checkResumable(saved, current, /*lossScaling=*/false, "ckpt"); }),
            "ckpt: cannot resume exactly: loss_scaler scale 2048, 7 good steps in a row, 5 "
            "skipped in the checkpoint, but this run does not scale its loss");
  saved.lossScaler = {};
  EXPECT_NO_THROW(checkResumable(saved, current, false, "ckpt"));
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
  std::string path =
      saveCheckpoint(out, saved.plan, saved.bytes(), sampleState(), {vocabOf(saved.plan)});
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
  saveCheckpoint(out, saved.plan, saved.bytes(), sampleState(), {vocabOf(saved.plan)});
  EXPECT_EQ(listing(out), std::vector<std::string>{"checkpoint-12"});
  loadCheckpoint(path, loaded.plan, loaded.bytes());
  EXPECT_EQ(loaded.arena[0], -1.0f);
}

TEST(Checkpoint, AModelFolderWithoutConfigOrVocabularyHasTheWeightsOnly) {
  ScratchDir dir;
  std::string vocab = dir.file("absent-vocab.txt");
  SmallPlan plan(vocab.c_str(), "");
  EXPECT_EQ(writeModelFolder(dir.file("model"), plan.plan, plan.bytes(), {vocab}),
            std::vector<std::string>{"model.safetensors"});
  EXPECT_EQ(listing(dir.file("model")), std::vector<std::string>{"model.safetensors"});
  // Settings without a vocabulary to go with make no tokenizer_config.json either.
  EXPECT_EQ(
      writeModelFolder(dir.file("model"), plan.plan, plan.bytes(), {vocab, TokenizerSettings{}}),
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
  EXPECT_EQ(writeModelFolder(folder, plan.plan, plan.bytes(), {vocab, cased}),
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
                                    {vocabOf(saved.plan)});
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
  saveCheckpoint(out, saved.plan, saved.bytes(), earlier, {});
  std::string latest = saveCheckpoint(out, saved.plan, saved.bytes(), sampleState(), {});
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

// trainer_state.json: its round trip, the errors that name their key, every field checked
// one by one, its size limit, and the resume checks that list each difference from the run.
#include "bertc/runtime/checkpoint.h"

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

// A LoRA run's checkpoint holds the adapters alone: trainer_state.json fingerprints the frozen
// model they train on, and a resume on another one is refused. Checkpoints without one
// (no adapters, or written before it was kept) resume as before.
TEST(Checkpoint, ALoraStateFingerprintsItsFrozenModel) {
  TrainerState saved = sampleState();
  saved.frozenModelFingerprint = 0x0123456789abcdefu;
  std::string text = formatTrainerState(saved);
  EXPECT_NE(text.find("\"frozen_model\": {\n    \"fingerprint\": \"0123456789abcdef\""),
            std::string::npos)
      << text;
  TrainerState parsed = parseTrainerState(text, "state.json");
  ASSERT_TRUE(parsed.frozenModelFingerprint);
  EXPECT_EQ(*parsed.frozenModelFingerprint, *saved.frozenModelFingerprint);
  EXPECT_FALSE(
      parseTrainerState(formatTrainerState(sampleState()), "s.json").frozenModelFingerprint);
  nlohmann::json json = nlohmann::json::parse(text);
  json["frozen_model"]["fingerprint"] = "xyz";
  EXPECT_EQ(errorOf([&] { parseTrainerState(json.dump(), "s.json"); }),
            "s.json: 'frozen_model/fingerprint' must be hexadecimal (16 digits)");

  TrainerState current = saved;
  EXPECT_NO_THROW(checkResumable(saved, current, true, "ckpt"));
  *current.frozenModelFingerprint ^= 1;
  EXPECT_EQ(errorOf([&] { checkResumable(saved, current, true, "ckpt"); }),
            "ckpt: cannot resume exactly: the frozen model (--init's, else [model] from's, else "
            "the seed's) is not the one the checkpoint's adapters were trained on: pass the "
            "run's --init");
  TrainerState older = sampleState();
  EXPECT_NO_THROW(checkResumable(older, current, true, "ckpt"));
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

} // namespace
} // namespace bertc

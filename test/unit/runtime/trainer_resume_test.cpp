// End-to-end tests of checkpoints with the stand-in trainer (trainer_runner.h): a resumed
// run repeats the uninterrupted run's losses bit for bit, also after a SIGKILL mid-run;
// resumes that cannot be exact are refused with the reason; sharded checkpoints resume
// exactly too; saved folders are Hugging Face model folders; grouping by length lowers the
// padding.
#include "trainer_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

namespace bertc {
namespace {

using testing::readCheckpoint;
using testing::readLog;
using testing::readText;
using testing::RunResult;
using testing::runTrainer;
using testing::ScratchDir;
using testing::writeData;

/// The logged steps first..last (1-based, inclusive) of `log`.
std::vector<nlohmann::json> steps(const std::vector<nlohmann::json> &log, size_t first,
                                  size_t last) {
  return std::vector<nlohmann::json>(log.begin() + std::ptrdiff_t(first - 1),
                                     log.begin() + std::ptrdiff_t(last));
}

/// Whether two safetensors files hold the same tensors with bit-identical values.
bool sameTensors(const std::string &a, const std::string &b) {
  auto first = readCheckpoint(a), second = readCheckpoint(b);
  if (first.size() != second.size())
    return false;
  for (const auto &[name, values] : first)
    if (!second.count(name) || second[name].size() != values.size() ||
        std::memcmp(values.data(), second[name].data(), values.size() * sizeof(float)) != 0)
      return false;
  return true;
}

TEST(TrainerResume, AResumedRunRepeatsTheUninterruptedLossesBitForBit) {
  ScratchDir dir;
  std::string data = writeData(dir);
  for (std::string grouping : {"", " --group-by-length"}) {
    SCOPED_TRACE("flags:" + grouping);
    std::string run = "--data " + data + " --steps 10" + grouping;
    ASSERT_EQ(runTrainer(dir, run + " --log full.jsonl --save full/").exitCode, 0);
    std::vector<nlohmann::json> full = readLog(dir.file("full.jsonl"));
    ASSERT_EQ(full.size(), 10u);

    RunResult saving = runTrainer(dir, run + " --save-every 4 --save out --log saving.jsonl");
    ASSERT_EQ(saving.exitCode, 0) << saving.err;
    EXPECT_NE(saving.out.find("saved out/checkpoint-4\n"), std::string::npos) << saving.out;
    EXPECT_NE(saving.out.find("saved out/checkpoint-8\n"), std::string::npos) << saving.out;
    EXPECT_EQ(readLog(dir.file("saving.jsonl")), full) << "saving changes nothing";

    // From checkpoint-4 with the steps given again; from checkpoint-8 with the checkpoint's
    // step count (the run's other settings, its length grouping too, must be given again).
    RunResult resumed = runTrainer(dir, run + " --resume out/checkpoint-4 --log from4.jsonl"
                                              " --save from4/");
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    EXPECT_EQ(resumed.out.rfind("data: 20 rows from " + data +
                                    " (pre-tokenized)\n"
                                    "resume: out/checkpoint-4 at step 4\nstep 5/10  loss ",
                                0),
              0u)
        << resumed.out;
    EXPECT_EQ(readLog(dir.file("from4.jsonl")), steps(full, 5, 10));
    EXPECT_TRUE(
        sameTensors(dir.file("from4/model.safetensors"), dir.file("full/model.safetensors")));
    resumed = runTrainer(dir, "--data " + data + grouping +
                                  " --resume out/checkpoint-8 --log from8.jsonl");
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    EXPECT_EQ(readLog(dir.file("from8.jsonl")), steps(full, 9, 10));
    std::filesystem::remove_all(dir.file("out"));
  }
}

// With --max-shard-size 8B each of the stand-in's parameters (8, 8 and 4 bytes) is a shard
// of its own, in the final folder and in every checkpoint; a resume from such a checkpoint
// repeats the unsharded run bit for bit, and a sharded folder is a model to --init from.
TEST(TrainerResume, ShardedCheckpointsResumeBitForBit) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string run = "--data " + data + " --steps 10";
  ASSERT_EQ(runTrainer(dir, run + " --log full.jsonl --save full").exitCode, 0);
  std::vector<nlohmann::json> full = readLog(dir.file("full.jsonl"));
  RunResult sharded =
      runTrainer(dir, run + " --save-every 4 --save out --max-shard-size 8B --log out.jsonl");
  ASSERT_EQ(sharded.exitCode, 0) << sharded.err;
  EXPECT_NE(sharded.out.find("saved out (model-00001-of-00003.safetensors, "
                             "model-00002-of-00003.safetensors, model-00003-of-00003.safetensors, "
                             "model.safetensors.index.json, config.json)\n"),
            std::string::npos)
      << sharded.out;
  EXPECT_EQ(readLog(dir.file("out.jsonl")), full);
  for (std::string folder : {"out/", "out/checkpoint-4/", "out/checkpoint-8/"}) {
    EXPECT_FALSE(std::filesystem::exists(dir.file(folder + "model.safetensors"))) << folder;
    EXPECT_EQ(readCheckpoint(dir.file(folder + "model.safetensors.index.json")).size(), 3u)
        << folder;
  }
  EXPECT_TRUE(sameTensors(dir.file("out/model.safetensors.index.json"),
                          dir.file("full/model.safetensors")));

  RunResult resumed = runTrainer(dir, run + " --resume out/checkpoint-4 --log from4.jsonl"
                                            " --save from4");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(readLog(dir.file("from4.jsonl")), steps(full, 5, 10));
  EXPECT_TRUE(sameTensors(dir.file("from4/model.safetensors"), dir.file("full/model.safetensors")));

  RunResult loaded = runTrainer(dir, run + " --steps 0 --init out --save loaded.safetensors");
  ASSERT_EQ(loaded.exitCode, 0) << loaded.err;
  EXPECT_NE(loaded.out.find("init: 3 tensors loaded from out/model.safetensors.index.json, 0 in "
                            "the file not used by this model ignored\n"),
            std::string::npos)
      << loaded.out;
  EXPECT_TRUE(sameTensors(dir.file("loaded.safetensors"), dir.file("full/model.safetensors")));
}

// Evaluations every 4 steps too: the one of a checkpoint's step comes before the checkpoint,
// so a run killed between the two evaluates that step again when resumed.
TEST(TrainerResume, AKilledRunResumesToTheSameResult) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string run = "--data " + data + " --steps 60 --log run.jsonl --save out --eval " + data +
                    " --eval-every 4 --save-best best";
  ASSERT_EQ(runTrainer(dir, run).exitCode, 0);
  std::rename(dir.file("run.jsonl").c_str(), dir.file("uninterrupted.jsonl").c_str());
  std::rename(dir.file("out").c_str(), dir.file("uninterrupted").c_str());
  std::rename(dir.file("best").c_str(), dir.file("uninterrupted-best").c_str());

  // Start the run with checkpoints every 4 steps and kill it once checkpoint-4 exists:
  // wherever it got to (even the end), the resumed run must finish identically.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (chdir(dir.file("").c_str()) != 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
      _exit(127);
    execl(BERTC_STANDIN_TRAINER, BERTC_STANDIN_TRAINER, "--data", data.c_str(), "--steps", "60",
          "--log", "run.jsonl", "--save", "out", "--save-every", "4", "--eval", data.c_str(),
          "--eval-every", "4", "--save-best", "best", nullptr);
    _exit(127);
  }
  std::string firstCheckpoint = dir.file("out/checkpoint-4/trainer_state.json");
  int status = 0;
  bool exited = false;
  for (int wait = 0; wait < 20000 && !exited && !std::filesystem::exists(firstCheckpoint); ++wait) {
    exited = waitpid(child, &status, WNOHANG) == child;
    usleep(500);
  }
  if (!exited) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  ASSERT_TRUE(std::filesystem::exists(firstCheckpoint));

  RunResult resumed =
      runTrainer(dir, "--data " + data + " --log run.jsonl --save out --save-every 4 --eval " +
                          data + " --eval-every 4 --save-best best --resume out");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  SCOPED_TRACE(resumed.out.substr(0, resumed.out.find('\n'))); // "resume: out/checkpoint-N"
  EXPECT_NE(resumed.out.find("done: step 60/60"), std::string::npos) << resumed.out;
  EXPECT_EQ(readLog(dir.file("run.jsonl")), readLog(dir.file("uninterrupted.jsonl")));
  EXPECT_TRUE(
      sameTensors(dir.file("out/model.safetensors"), dir.file("uninterrupted/model.safetensors")));
  EXPECT_EQ(readText(dir.file("best/eval_results.json")),
            readText(dir.file("uninterrupted-best/eval_results.json")));
  EXPECT_TRUE(sameTensors(dir.file("best/model.safetensors"),
                          dir.file("uninterrupted-best/model.safetensors")));
  for (const auto &entry : std::filesystem::directory_iterator(dir.file("out")))
    EXPECT_NE(entry.path().filename().string()[0], '.') << "left behind: " << entry.path();
}

TEST(TrainerResume, BadResumesAreRefusedWithTheReason) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string run = "--data " + data + " --steps 8";
  ASSERT_EQ(runTrainer(dir, run + " --save-every 4 --save out").exitCode, 0);
  auto error = [&](const std::string &args) {
    RunResult result = runTrainer(dir, args);
    EXPECT_EQ(result.exitCode, 1) << args;
    return result.err;
  };
  EXPECT_EQ(error(run + " --resume absent"), "trainer: error: absent: no such checkpoint folder\n");
  std::filesystem::create_directories(dir.file("empty"));
  EXPECT_EQ(error(run + " --resume empty"),
            "trainer: error: empty: holds neither trainer_state.json nor a checkpoint-N "
            "folder to resume from\n");
  EXPECT_EQ(error(run + " --resume out --seed 8"),
            "trainer: error: out/checkpoint-8: cannot resume exactly: seed 7 in the "
            "checkpoint, 8 here\n");
  EXPECT_EQ(error(run + " --resume out/checkpoint-4 --group-by-length"),
            "trainer: error: out/checkpoint-4: cannot resume exactly: group_by_length off in "
            "the checkpoint, on here\n");
  testing::writeText(dir.file("more.jsonl"),
                     readText(data) + R"({"input_ids": [1, 2], "label": 0})" + "\n");
  EXPECT_EQ(error("--data more.jsonl --resume out"),
            "trainer: error: out/checkpoint-8: cannot resume exactly: data rows 20 in the "
            "checkpoint, 21 here\n");
  EXPECT_EQ(error(run + " --steps 6 --resume out"),
            "trainer: error: out/checkpoint-8: the checkpoint is at step 8, past the run's 6 "
            "steps\n");
  // A checkpoint of another model: its classifier has three classes.
  float values[3] = {};
  writeSafetensors(dir.file("out/checkpoint-8/model.safetensors"),
                   {{"classifier.weight", {3, 1}, values},
                    {"classifier.bias", {3}, values},
                    {"bert.embeddings.LayerNorm.weight", {1}, values}});
  EXPECT_EQ(error(run + " --resume out"),
            "trainer: error: out/checkpoint-8: checkpoint does not match this trainer: "
            "model.safetensors: 'classifier.bias' is [3] in the checkpoint, [2] here; "
            "'classifier.weight' is [3,1] in the checkpoint, [2,1] here\n");

  for (std::string args : {" --resume out --init x.safetensors", " --save-every 4",
                           " --save-every 4 --save model.safetensors", " --save-every 0"})
    EXPECT_EQ(runTrainer(dir, run + args).exitCode, 2) << args;
  EXPECT_EQ(runTrainer(dir, run + " --save-every 4")
                .err.rfind("trainer: error: --save-every writes checkpoint folders into the --save "
                           "folder: pass --save DIR (not a .safetensors file)\n",
                           0),
            0u);
}

// A checkpoint's state must be what this run (its job and flags) would have saved at the
// checkpoint's step: a field edited by hand, or a flag the run was started with and not
// given again, is refused by name. (Each of these resumed before, from a state that did
// not match the run.)
TEST(TrainerResume, AStateThatIsNotThisRunsIsRefusedNamingTheField) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string run = "--data " + data + " --steps 8";
  ASSERT_EQ(runTrainer(dir, run + " --save-every 4 --save out").exitCode, 0);
  std::string statePath = dir.file("out/checkpoint-4/trainer_state.json");
  const std::string saved = readText(statePath);
  nlohmann::json tokens = nlohmann::json::parse(saved)["tokens"];
  int64_t real = tokens["real"], computed = tokens["computed"];
  std::string mismatch = "trainer: error: out/checkpoint-4: cannot resume exactly: ";
  std::string invalid = "trainer: error: out/checkpoint-4/trainer_state.json: ";
  // 20 rows in micro-batches of 4, 2 a step: epoch 1 is steps 1-3, step 4 reads 8 rows of
  // epoch 2. The stand-in trains in fp32 with lr 0.1, linear, warmup ceil(0.1 x 8) steps.
  struct Edit {
    const char *pointer;
    nlohmann::json value;
    std::string expected;
    double epoch = 1.4; ///< the fractional epoch, which follows data_position
  } edits[] = {
      {"/group_by_length", true, mismatch + "group_by_length on in the checkpoint, off here"},
      {"/seed", 8, mismatch + "seed 8 in the checkpoint, 7 here"},
      {"/learning_rate", 0.2, mismatch + "learning_rate 0.2 in the checkpoint, 0.1 here"},
      {"/lr_schedule", "constant",
       mismatch + "lr_schedule constant in the checkpoint, linear here"},
      {"/warmup_steps", 0, mismatch + "warmup_steps 0 in the checkpoint, 1 here"},
      {"/data_position/cursor", 12,
       mismatch + "data_position epoch 2, row 12 in the checkpoint, epoch 2, row 8 after step 4 "
                  "here",
       1.6},
      {"/global_step", 3,
       mismatch + "data_position epoch 2, row 8 in the checkpoint, epoch 1, row 20 after step 3 "
                  "here"},
      {"/tokens/real", real - 1,
       mismatch + "tokens " + std::to_string(real - 1) + " real of " + std::to_string(computed) +
           " in the checkpoint, " + std::to_string(real) + " real of " + std::to_string(computed) +
           " after step 4 here"},
      {"/loss_scaler",
       {{"scale", 32768.0}, {"good_steps_in_row", 0}, {"skipped_steps", 1}},
       mismatch + "loss_scaler scale 32768, 0 good steps in a row, 1 skipped in the checkpoint, "
                  "but this run does not scale its loss"},
      {"/data_position/epoch", INT64_MAX,
       invalid + "'data_position/epoch' must be an integer in [1, 4], got 9223372036854775807"},
      {"/data_position/cursor", 4,
       invalid + "'epoch' must be 1.2 (data_position's epoch 2, row 4 of 20), got 1.4"},
  };
  for (const Edit &edit : edits) {
    nlohmann::json state = nlohmann::json::parse(saved);
    state["epoch"] = edit.epoch;
    state[nlohmann::json::json_pointer(edit.pointer)] = edit.value;
    testing::writeText(statePath, state.dump(2));
    RunResult resumed = runTrainer(dir, run + " --resume out/checkpoint-4");
    EXPECT_EQ(resumed.exitCode, 1) << edit.pointer;
    EXPECT_EQ(resumed.err, edit.expected + "\n") << edit.pointer;
  }
  // A run started with a flag resumes only with it.
  ASSERT_EQ(runTrainer(dir, run + " --seed 8 --save-every 4 --save seeded").exitCode, 0);
  EXPECT_EQ(runTrainer(dir, run + " --resume seeded/checkpoint-4").err,
            "trainer: error: seeded/checkpoint-4: cannot resume exactly: seed 8 in the "
            "checkpoint, 7 here\n");
  EXPECT_EQ(runTrainer(dir, run + " --seed 8 --resume seeded/checkpoint-4").exitCode, 0);
}

// A crash while checkpoint-8 was being saved again can leave it only as .checkpoint-8.old:
// --resume puts it back and continues from step 8, not from checkpoint-4.
TEST(TrainerResume, AResumeRecoversACheckpointLeftMidSwap) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string run = "--data " + data + " --steps 10";
  ASSERT_EQ(runTrainer(dir, run + " --save-every 4 --save out").exitCode, 0);
  std::filesystem::rename(dir.file("out/checkpoint-8"), dir.file("out/.checkpoint-8.old"));
  RunResult resumed = runTrainer(dir, run + " --resume out");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("resume: out/checkpoint-8 at step 8\n"), std::string::npos)
      << resumed.out;
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/checkpoint-8/trainer_state.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/.checkpoint-8.old")));
}

/// The run's pad fraction as the summary prints it ("padding 31.7% of tokens").
double summaryPadding(const std::string &out) {
  size_t at = out.find("padding ");
  return at == std::string::npos ? -1.0 : std::strtod(out.c_str() + at + 8, nullptr);
}

TEST(TrainerResume, SavedFoldersAreHuggingFaceModelFolders) {
  ScratchDir dir;
  std::string data = writeData(dir);
  testing::writeText(dir.file("standin-vocab.txt"), "[PAD]\n[UNK]\n");
  RunResult run = runTrainer(dir, "--data " + data + " --steps 3 --save-every 3 --save out " +
                                      "--log log.jsonl");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("saved out (model.safetensors, config.json, vocab.txt)\ndone: step "
                         "3/3, loss "),
            std::string::npos)
      << run.out;
  for (std::string folder : {"out/", "out/checkpoint-3/"}) {
    nlohmann::json config = nlohmann::json::parse(readText(dir.file(folder + "config.json")));
    EXPECT_EQ(config["model_type"], "bert") << folder;
    EXPECT_EQ(readText(dir.file(folder + "vocab.txt")), "[PAD]\n[UNK]\n") << folder;
    EXPECT_EQ(readCheckpoint(dir.file(folder + "model.safetensors")).size(), 3u) << folder;
  }
  EXPECT_EQ(readCheckpoint(dir.file("out/checkpoint-3/optimizer.safetensors")).size(), 4u)
      << "exp_avg and exp_avg_sq of the two trainable parameters";

  // Every logged step has its pad fraction; the summary has the run's, which grouping by
  // length lowers (20 rows of 2..8 tokens: mega-batches of one batch of 8, min(20 / 32, 50)
  // at least 1, whose two micro-batches of 4 take the longer and the shorter rows).
  for (const nlohmann::json &line : readLog(dir.file("log.jsonl")))
    EXPECT_TRUE(line["pad_fraction"].is_number()) << line;
  double plain = summaryPadding(run.out);
  run = runTrainer(dir, "--data " + data + " --steps 3 --group-by-length");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_GT(plain, 20.0) << run.out;
  EXPECT_LT(summaryPadding(run.out), 0.8 * plain) << run.out;
}

} // namespace
} // namespace bertc

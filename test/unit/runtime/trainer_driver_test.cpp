// End-to-end tests of the trainer driver (see trainer_runner.h for the stand-in): its log,
// determinism, loading and saving parameters, progress output, and exit codes and messages.
// Checkpoints and resuming are trainer_resume_test.cpp's.
#include "fifo_input.h"
#include "trainer_runner.h"

#include "bertc/abi/trainer.h"

#include <algorithm>
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

TEST(TrainerDriver, LogsOneLinePerOptimizerStep) {
  ScratchDir dir;
  std::string data = writeData(dir);
  RunResult run = runTrainer(dir, "--data " + data + " --log " + dir.file("log.jsonl"));
  ASSERT_EQ(run.exitCode, 0) << run.err;
  // 2 epochs (the plan's default) x ceil(20 / 8) steps.
  std::vector<nlohmann::json> log = readLog(dir.file("log.jsonl"));
  ASSERT_EQ(log.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(log[i]["step"], i + 1);
    EXPECT_EQ(log[i]["epoch"], i / 3 + 1);
    EXPECT_TRUE(log[i]["loss"].is_number());
  }
  EXPECT_EQ(log[0]["lr"], 0.0) << "warmup ceil(0.1 * 6) = 1 step starts at lr 0";
  EXPECT_NE(run.out.find("step 1/6  loss "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("step 6/6  loss "), std::string::npos) << run.out;

  run = runTrainer(dir, "--data=" + data + " --steps 4 --log " + dir.file("log.jsonl"));
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(readLog(dir.file("log.jsonl")).size(), 4u);
}

TEST(TrainerDriver, SameSeedGivesIdenticalLogs) {
  ScratchDir dir;
  std::string data = writeData(dir);
  auto logFor = [&](const std::string &seed, const std::string &name) {
    RunResult run = runTrainer(dir, "--data " + data + " --epochs 3 --seed " + seed + " --log " +
                                        dir.file(name));
    EXPECT_EQ(run.exitCode, 0) << run.err;
    return readLog(dir.file(name));
  };
  std::vector<nlohmann::json> first = logFor("11", "first.jsonl");
  EXPECT_EQ(first.size(), 9u);
  EXPECT_EQ(first, logFor("11", "second.jsonl"));
  EXPECT_NE(first, logFor("12", "other.jsonl"));
}

TEST(TrainerDriver, SaveThenInitRestoresTheParameters) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string checkpointDir = dir.file("checkpoint") + "/";
  RunResult run = runTrainer(dir, "--data " + data + " --steps 3 --save " + checkpointDir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  std::string saved = checkpointDir + "model.safetensors";
  ASSERT_TRUE(std::filesystem::exists(saved)) << run.out;

  // Load the directory (an HF-style checkpoint folder), train 0 steps, save again.
  run = runTrainer(dir, "--data " + data + " --init " + checkpointDir + " --steps 0 --save " +
                            dir.file("again.safetensors"));
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto original = readCheckpoint(saved);
  auto restored = readCheckpoint(dir.file("again.safetensors"));
  EXPECT_EQ(original.size(), 3u);
  ASSERT_EQ(original.size(), restored.size());
  for (const auto &[name, values] : original)
    EXPECT_EQ(std::memcmp(values.data(), restored[name].data(), values.size() * 4), 0) << name;
  EXPECT_NE(original["classifier.bias"], std::vector<float>(2, 0.0f)) << "3 steps trained it";
  EXPECT_EQ(original["bert.embeddings.LayerNorm.weight"], std::vector<float>{1.0f});
}

TEST(TrainerDriver, InitAcceptsHuggingFaceNamesAndIgnoresUnusedTensors) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string init = dir.file("hf.safetensors");
  float weight[2] = {0.5f, -0.5f}, bias[2] = {0.25f, 0.0f}, gamma = 2.0f, unused[3] = {};
  writeSafetensors(init, {{"classifier.weight", {2, 1}, weight},
                          {"classifier.bias", {2}, bias},
                          {"bert.embeddings.LayerNorm.gamma", {1}, &gamma}, // legacy name
                          {"cls.predictions.bias", {3}, unused}});
  RunResult run = runTrainer(dir, "--data " + data + " --init " + init + " --steps 0 --save " +
                                      dir.file("out.safetensors"));
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("init: 3 tensors loaded from " + init +
                         ", 1 in the file not used by this model ignored"),
            std::string::npos)
      << run.out;
  auto saved = readCheckpoint(dir.file("out.safetensors"));
  EXPECT_EQ(saved["classifier.weight"], (std::vector<float>{0.5f, -0.5f}));
  EXPECT_EQ(saved["bert.embeddings.LayerNorm.weight"], std::vector<float>{2.0f});
}

TEST(TrainerDriver, InitFillsAMissingHeadFromTheSeed) {
  // A pretraining checkpoint: encoder tensors and an MLM head, no classifier.
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string init = dir.file("pretrained.safetensors");
  float gamma = 2.0f, unused[3] = {};
  writeSafetensors(init, {{"bert.embeddings.LayerNorm.weight", {1}, &gamma},
                          {"cls.predictions.bias", {3}, unused}});
  RunResult run = runTrainer(dir, "--data " + data + " --seed 5 --init " + init +
                                      " --steps 0 --save " + dir.file("out.safetensors"));
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("init: not in the checkpoint, initialised from the seed: "
                         "classifier.weight, classifier.bias\n"),
            std::string::npos)
      << run.out;
  run = runTrainer(dir, "--data " + data + " --seed 5 --steps 0 --save " +
                            dir.file("random.safetensors"));
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto loaded = readCheckpoint(dir.file("out.safetensors"));
  auto random = readCheckpoint(dir.file("random.safetensors"));
  EXPECT_EQ(loaded["bert.embeddings.LayerNorm.weight"], std::vector<float>{2.0f});
  EXPECT_EQ(loaded["classifier.weight"], random["classifier.weight"]);
  EXPECT_EQ(loaded["classifier.bias"], std::vector<float>(2, 0.0f));
}

TEST(TrainerDriver, InitErrorsNameTheTensor) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string init = dir.file("bad.safetensors");
  float values[3] = {};
  writeSafetensors(init, {{"classifier.weight", {2, 1}, values}, {"classifier.bias", {2}, values}});
  RunResult run = runTrainer(dir, "--data " + data + " --init " + init);
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err, "trainer: error: " + init +
                         ": tensor bert.embeddings.LayerNorm.weight: not found (the file "
                         "holds 2 tensors)\n");

  writeSafetensors(init, {{"classifier.weight", {2, 1}, values},
                          {"classifier.bias", {3}, values},
                          {"bert.embeddings.LayerNorm.weight", {1}, values}});
  run = runTrainer(dir, "--data " + data + " --init " + init);
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err, "trainer: error: " + init +
                         ": tensor classifier.bias: file has [3], model expects [2]\n");
}

TEST(TrainerDriver, InitFolderWithAnotherFrameworksWeights) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::string folder = dir.file("hf");
  std::filesystem::create_directory(folder);
  testing::writeText(folder + "/tf_model.h5", "");
  RunResult run = runTrainer(dir, "--data " + data + " --init " + folder);
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err, "trainer: error: " + folder +
                         "/model.safetensors: not there; the folder holds tf_model.h5 only: save "
                         "the model from transformers with save_pretrained(folder, "
                         "safe_serialization=True)\n");

  // pytorch_model.bin is read (torch_checkpoint_test.cpp): one that is not is an error of
  // its own.
  testing::writeText(folder + "/pytorch_model.bin", "");
  run = runTrainer(dir, "--data " + data + " --init " + folder);
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err, "trainer: error: " + folder +
                         "/pytorch_model.bin: not a PyTorch checkpoint (neither a zip archive "
                         "nor torch.save's older format)\n");

  // Without another framework's weights, the file is simply missing.
  std::filesystem::remove(folder + "/pytorch_model.bin");
  std::filesystem::remove(folder + "/tf_model.h5");
  run = runTrainer(dir, "--data " + data + " --init " + folder);
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err.rfind("trainer: error: " + folder + "/model.safetensors: cannot open", 0), 0u)
      << run.err;
}

// A FIFO as the data or as an --init folder's weights is refused at once (open() of a FIFO
// waits for a writer: the trainer hung before its first line).
TEST(TrainerDriver, AFifoGivenAsAnInputIsRefusedWithoutWaiting) {
  ScratchDir dir;
  std::string data = writeData(dir);
  {
    testing::FifoInput fifo(dir.file("fifo.jsonl"));
    RunResult run = runTrainer(dir, "--data " + fifo.path());
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_EQ(run.err, "trainer: error: " + fifo.path() + ": is a FIFO, not a regular file\n");
  }
  std::filesystem::create_directory(dir.file("hf"));
  testing::FifoInput weights(dir.file("hf/pytorch_model.bin"));
  RunResult run = runTrainer(dir, "--data " + data + " --init " + dir.file("hf"));
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err, "trainer: error: " + weights.path() + ": is a FIFO, not a regular file\n");
}

TEST(TrainerDriver, DataErrorsExitWithOne) {
  ScratchDir dir;
  std::string missing = dir.file("absent.jsonl");
  RunResult run = runTrainer(dir, "--data " + missing);
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err.rfind("trainer: error: " + missing + ": cannot open", 0), 0u) << run.err;

  std::string bad = dir.file("bad.jsonl");
  testing::writeText(bad, "{\"input_ids\": [1, 2], \"label\": 0}\n{\"input_ids\": [1]}\n");
  run = runTrainer(dir, "--data " + bad);
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err, "trainer: error: " + bad + ":2: missing key 'label'\n");
}

TEST(TrainerDriver, TrainsOnTextThroughTheVocabulary) {
  // The plan's text column is "sentence"; its default vocabulary, standin-vocab.txt, is
  // made here too, so that --vocab is seen to replace it.
  ScratchDir dir;
  testing::writeText(dir.file("vocab.txt"), "[PAD]\n[UNK]\n[CLS]\n[SEP]\ngood\nbad\nfilm\n");
  testing::writeText(dir.file("standin-vocab.txt"), "[PAD]\n[UNK]\n[CLS]\n[SEP]\nGood\n");
  std::string text = "sentence\tlabel\n";
  for (int row = 0; row < 20; ++row)
    text += row % 2 ? "good film\t1\n" : "bad bad film film film film film film film\t0\n";
  testing::writeText(dir.file("train.tsv"), text);
  RunResult run = runTrainer(dir, "--data train.tsv --vocab vocab.txt --log log.jsonl");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out.rfind("data: 20 rows from train.tsv, tokenized with vocab.txt (uncased), "
                          "10 rows truncated to 8 tokens\n",
                          0),
            0u)
      << run.out;
  EXPECT_EQ(readLog(dir.file("log.jsonl")).size(), 6u);

  run = runTrainer(dir, "--data train.tsv --steps 0");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("tokenized with standin-vocab.txt (cased)"), std::string::npos) << run.out;

  testing::writeText(dir.file("bad.tsv"), "sentence\tlabel\ngood\tyes\n");
  run = runTrainer(dir, "--data bad.tsv --vocab vocab.txt");
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err, "trainer: error: bad.tsv:2: label 'yes' is not an integer in [0, 2)\n");
}

TEST(TrainerDriver, UsageErrorsExitWithTwo) {
  ScratchDir dir;
  std::string data = writeData(dir);
  RunResult run = runTrainer(dir, "--data " + data + " --bogus 3");
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_EQ(run.err.rfind("trainer: error: unknown flag '--bogus'\nusage: trainer", 0), 0u)
      << run.err;

  EXPECT_EQ(runTrainer(dir, "--data " + data + " --steps many").exitCode, 2);
  EXPECT_EQ(runTrainer(dir, "--data " + data + " --epochs 0").exitCode, 2);
  EXPECT_EQ(runTrainer(dir, "--data").exitCode, 2);
  run = runTrainer(dir, "--data " + data + " --epochs 9223372036854775807");
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_EQ(run.err.rfind("trainer: error: 9223372036854775807 epochs of 3 steps are more steps "
                          "than a run can count\n",
                          0),
            0u)
      << run.err;
  run = runTrainer(dir, "");
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_EQ(run.err.rfind("trainer: error: no training data: pass --data FILE\n", 0), 0u);

  // Counts start with a digit (strtoull would read " -1" as 2^64 - 1); --eval-every needs
  // --eval and a positive count; --log must not be a file the run reads.
  struct Case {
    std::string args, error;
  } cases[] = {
      {"--seed ' -1'", "--seed expects a non-negative integer, got ' -1'"},
      {"--eval-every 5", "--eval-every evaluates the --eval data: pass --eval FILE"},
      {"--eval " + data + " --eval-every 0",
       "--eval-every must be at least 1 (without it: at each epoch's end)"},
      {"--log " + data,
       "--log " + data + " is the --data file: the metrics log would overwrite it"},
      // --max-shard-size takes the sizes --vram takes, of at least a byte.
      {"--max-shard-size 5XB",
       "--max-shard-size expects a size of at least 1 byte (5GB, 1.5GiB, 2MB, 4096), got '5XB'"},
      {"--max-shard-size=0",
       "--max-shard-size expects a size of at least 1 byte (5GB, 1.5GiB, 2MB, 4096), got '0'"},
  };
  for (const Case &c : cases) {
    run = runTrainer(dir, "--data " + data + " " + c.args);
    EXPECT_EQ(run.exitCode, 2) << c.args;
    EXPECT_EQ(run.err.rfind("trainer: error: " + c.error + "\n", 0), 0u) << run.err;
  }
  EXPECT_NE(readText(data).find("input_ids"), std::string::npos) << "the data is untouched";
  run = runTrainer(dir, "--data " + data + " --vocab absent.txt");
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.err, "trainer: error: --vocab absent.txt: no such file\n");
}

// A target that cannot be written would lose every trained weight at the end: it is refused
// before the data is read or step 1 runs (no log line is written).
TEST(TrainerDriver, SaveTargetsAreCheckedBeforeTraining) {
  ScratchDir dir;
  std::string data = writeData(dir);
  testing::writeText(dir.file("taken"), "");
  std::filesystem::create_directories(dir.file("folder.safetensors"));
  std::filesystem::create_directories(dir.file("notes"));
  testing::writeText(dir.file("notes/ideas.md"), "");
  struct Case {
    std::string args;
    std::string error;
  } cases[] = {
      {"--save taken", "--save taken: exists and is not a folder"},
      {"--save taken/model", "--save taken/model: cannot create the folder: Not a directory"},
      {"--save folder.safetensors", "--save folder.safetensors: is a folder, not a .safetensors "
                                    "file"},
      {"--save taken/model.safetensors",
       "--save " + dir.file("taken") + ": exists and is not a folder"},
      {"--save /proc/model", "--save /proc/model: cannot create the folder: "},
      {"--eval " + data + " --save-best taken", "--save-best taken: exists and is not a folder"},
      {"--eval " + data + " --save-best /proc/best",
       "--save-best /proc: cannot write in the folder: "},
      // Each new best replaces the folder whole.
      {"--eval " + data + " --save-best .",
       "--save-best .: the folder is replaced whole at each new best score, and --log "
       "log.jsonl is in it: give --save-best a folder of its own"},
      {"--eval " + data + " --save run --save-best run/",
       "--save-best run/: the folder is replaced whole at each new best score, and --save run "
       "is in it"},
      {"--eval " + data + " --save-best notes",
       "--save-best notes: the folder is replaced whole at each new best score, and it holds "
       "files but no eval_results.json (not a best model bertc saved): give a new or empty "
       "folder"},
  };
  for (const Case &c : cases) {
    RunResult run = runTrainer(dir, "--data " + data + " --log log.jsonl " + c.args);
    EXPECT_EQ(run.exitCode, 1) << c.args;
    EXPECT_EQ(run.err.rfind("trainer: error: " + c.error, 0), 0u) << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("log.jsonl"))) << c.args;
  }
}

// An earlier run's best model (its folder has an eval_results.json) is replaced whole.
TEST(TrainerDriver, SaveBestReplacesAnEarlierBestModel) {
  ScratchDir dir;
  std::string data = writeData(dir);
  std::filesystem::create_directories(dir.file("best"));
  testing::writeText(dir.file("best/eval_results.json"), "{\"step\": 7}\n");
  testing::writeText(dir.file("best/model.safetensors"), "");
  RunResult run =
      runTrainer(dir, "--data " + data + " --steps 2 --eval " + data + " --save-best best");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(readText(dir.file("best/eval_results.json")))["step"], 2);
  EXPECT_FALSE(readCheckpoint(dir.file("best/model.safetensors")).empty());

  // With --max-shard-size the best model is sharded too, and no model.safetensors is left.
  run = runTrainer(dir, "--data " + data + " --steps 2 --eval " + data +
                            " --save-best best --max-shard-size 8B");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("best/model.safetensors")));
  EXPECT_EQ(readCheckpoint(dir.file("best/model.safetensors.index.json")).size(), 3u);
  EXPECT_TRUE(std::filesystem::exists(dir.file("best/model-00003-of-00003.safetensors")));
}

TEST(TrainerDriver, AnArenaThatCannotBeAllocatedExitsWithThree) {
  ScratchDir dir;
  RunResult run = runTrainer(dir, "--data " + writeData(dir), BERTC_STANDIN_TRAINER_OOM);
  EXPECT_EQ(run.exitCode, 3);
  // The trainer's one line ends stderr; only a sanitizer build's allocator (which warns of
  // the failed allocation first) may write before it.
  const std::string message = "trainer: error: cannot allocate the arena: 4611686018427387904 "
                              "bytes (4294967296.00 GiB) needed\n";
  ASSERT_GE(run.err.size(), message.size()) << run.err;
  EXPECT_EQ(run.err.substr(run.err.size() - message.size()), message);
  EXPECT_EQ(run.err.find("trainer:"), run.err.size() - message.size()) << run.err;
  EXPECT_EQ(run.out.find("step 1"), std::string::npos);
}

TEST(TrainerDriver, ATrainerBuiltForAnotherAbiIsRefusedBeforeAnyWork) {
  ScratchDir dir;
  RunResult run = runTrainer(dir, "--data " + writeData(dir) + " --log log.jsonl",
                             BERTC_STANDIN_TRAINER_OTHER_ABI);
  EXPECT_EQ(run.exitCode, 1);
  std::string version = std::to_string(kTrainerAbiVersion);
  EXPECT_EQ(run.err,
            "trainer: error: built for trainer ABI " + std::to_string(kTrainerAbiVersion + 1) +
                " but linked with a runtime of ABI " + version + ": rebuild it with bertc\n");
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("log.jsonl")));
}

TEST(TrainerDriver, QuietPrintsOnlyTheSummary) {
  ScratchDir dir;
  RunResult run =
      runTrainer(dir, "--data " + writeData(dir) + " --steps 4 --save-every 2 --save out --quiet");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out.rfind("done: step 4/4, loss ", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("% of tokens, "), std::string::npos) << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/checkpoint-4/trainer_state.json")));
}

TEST(TrainerDriver, HelpPrintsUsage) {
  ScratchDir dir;
  RunResult run = runTrainer(dir, "--help");
  EXPECT_EQ(run.exitCode, 0);
  EXPECT_EQ(run.out.rfind("usage: trainer", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("(default: 7)"), std::string::npos) << "the plan's seed";
  // The job sets epochs (2), not steps: --epochs has the default, --steps none.
  EXPECT_NE(run.out.find("--epochs N        passes over the data (default: 2)\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("(0: load and save only)\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("LM's tokenizer.json (default: standin-vocab.txt)"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("  --max-shard-size SIZE\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(default: 5GB)\n"), std::string::npos) << run.out;
  EXPECT_TRUE(run.err.empty());
}

} // namespace
} // namespace bertc

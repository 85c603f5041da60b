// The generated trainer's command line: flags, their defaults from the compiled settings
// (TrainerPlan), the usage text and the checks between flags. Private to the runtime's
// driver (trainer_main.cpp).
#pragma once

#include "bertc/abi/trainer.h"
#include "bertc/runtime/safetensors_shards.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

namespace bertc {

/// Bad command line: reported with the usage text, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What the flags ask for.
struct TrainerOptions {
  std::string data;
  std::string vocab; ///< vocab.txt that tokenizes text data (default: the plan's vocabFile)
  std::string init;
  bool initGiven = false; ///< --init was passed (not just the plan's default)
  std::string log;
  std::string save;
  std::string resume;
  std::optional<int64_t> steps;
  std::optional<int64_t> epochs;
  std::optional<int64_t> saveEvery;
  std::optional<uint64_t> seed; ///< unset: the checkpoint's when resuming, else the plan's
  std::string eval;             ///< evaluation data ("" for none; default: the plan's)
  int64_t evalEvery = 0;        ///< evaluate every N steps; 0: at each epoch's end
  std::string saveBest;         ///< folder of the best model by the main eval score
  std::string mergeAdapter;     ///< folder of the model with its LoRA adapters merged in
  std::string initAdapter;      ///< LoRA adapters to start from ("": drawn from the seed)
  /// The largest safetensors file of a saved model folder: a larger model is sharded.
  uint64_t maxShardBytes = kDefaultMaxShardBytes;
  bool groupByLength = false;
  bool quiet = false;
  bool planCheck = false;
  bool help = false;
};

/// Parses the command line, defaults from `train`; flags accept "--flag VALUE" and
/// "--flag=VALUE". Throws UsageError for an unknown flag, a missing or malformed value, or
/// flags that conflict.
TrainerOptions parseTrainerFlags(const JobDataSettings &data, int argc, char **argv);

/// Writes the usage text, with the defaults of `train`, to `out`.
void printTrainerUsage(const TrainerPlan &plan, std::FILE *out);

/// Whether a --save path names one safetensors file (it ends in ".safetensors") rather than
/// a model folder.
bool savesToFile(const std::string &path);

/// Checks, before training, that what --save, --save-every and --save-best write can be
/// written: each folder they write in exists (it is created) and takes a new file, and no
/// target is a file where a folder belongs or the reverse; and that --save-best's folder,
/// replaced whole at each new best, holds none of the run's other paths and no files but a
/// best model's. Throws SaveError naming the flag.
void requireWritableSaveTargets(const TrainerOptions &options);

} // namespace bertc

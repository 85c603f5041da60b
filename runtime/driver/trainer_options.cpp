// The trainer's flags. Defaults come from the compiled settings; checks between flags happen
// here so that main() only ever sees a consistent set of options.
#include "trainer_options.h"

#include "bertc/abi/byte_size.h"
#include "bertc/abi/trainer.h"
#include "bertc/runtime/save_files.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

namespace bertc {

void printTrainerUsage(const TrainerPlan &plan, std::FILE *out) {
  const TrainSettings &train = plan.train;
  const JobDataSettings &data = plan.data;
  std::string initDefault = data.initCheckpoint[0]
                                ? data.initCheckpoint + std::string("; --init= for random")
                                : "none: random from the seed";
  // A job sets steps or epochs; the other has no default.
  std::string stepsDefault =
      train.steps > 0 ? " (default: " + std::to_string(train.steps) + ")" : "";
  std::string epochsDefault =
      train.steps > 0 ? "" : " (default: " + std::to_string(train.epochs) + ")";
  std::fprintf(
      out,
      "usage: trainer [--data FILE] [--vocab FILE] [--init FILE|DIR] [--log FILE]\n"
      "               [--steps N | --epochs N] [--save FILE|DIR] [--save-every N]\n"
      "               [--resume DIR] [--seed N] [--group-by-length] [--quiet]\n"
      "               [--eval FILE] [--eval-every N] [--save-best DIR]\n"
      "               [--max-shard-size SIZE] [--plan-check] [--help]\n"
      "  --data FILE       training data: JSONL (pre-tokenized input_ids, or text), CSV or\n"
      "                    TSV with named columns (default: %s)\n"
      "  --vocab FILE      the tokenizer of text data: a WordPiece vocab.txt, or a causal\n"
      "                    LM's tokenizer.json (default: %s)\n"
      "  --init PATH       start from a safetensors or PyTorch (torch.save) file, or a\n"
      "                    Hugging Face checkpoint directory holding model.safetensors\n"
      "                    (or model.safetensors.index.json and its shards) or\n"
      "                    pytorch_model.bin (default: %s)\n"
      "  --init-adapter PATH\n"
      "                    LoRA: start the adapters from a PEFT adapter_model.safetensors\n"
      "                    or its folder (default: %s)\n"
      "  --steps N         optimizer steps; overrides --epochs (0: load and save only)%s\n"
      "  --epochs N        passes over the data%s\n"
      "  --log FILE        write one JSON line of metrics per optimizer step (continued,\n"
      "                    not restarted, by --resume)\n"
      "  --save PATH       at the end, write a FILE.safetensors, or a Hugging Face model\n"
      "                    folder (model.safetensors, config.json, vocab.txt and, when\n"
      "                    the data is text, the tokenizer's tokenizer_config.json; a\n"
      "                    causal LM's tokenizer.json and the files beside it); with\n"
      "                    LoRA adapters, PEFT's adapter_model.safetensors and\n"
      "                    adapter_config.json in place of the model's weights\n"
      "  --save-every N    every N optimizer steps, write a resumable checkpoint folder\n"
      "                    DIR/checkpoint-STEP (needs --save DIR)\n"
      "  --resume DIR      continue exactly from a checkpoint folder, or from the latest\n"
      "                    checkpoint-N in a --save folder (with the run's --seed and\n"
      "                    --group-by-length, if given: its state must be this run's;\n"
      "                    LoRA adapters' with the run's --init, the model they train on)\n"
      "  --seed N          seed of initialisation, shuffling and dropout (default: %llu)\n"
      "  --group-by-length batch rows of similar length together (less padding)%s\n"
      "  --eval FILE       evaluation data, in the training data's format; scores go to the\n"
      "                    screen and the --log (default: %s)\n"
      "  --eval-every N    evaluate every N optimizer steps (default: at the end of each\n"
      "                    epoch); always after the last step\n"
      "  --save-best DIR   keep the model with the best main eval score (accuracy; mse for\n"
      "                    regression; f1 for spans) in DIR, with its eval_results.json\n"
      "                    (spans: and run_qa.py's predictions.json, nbest_predictions.json)\n"
      "  --merge-adapter DIR\n"
      "                    at the end, write the model with its LoRA adapters merged in\n"
      "                    (PEFT's merge_and_unload: W + scaling B A) as a Hugging Face\n"
      "                    model folder, in the precision it was trained in (a trainer\n"
      "                    of a job with a [lora] table)\n"
      "  --max-shard-size SIZE\n"
      "                    split the weights of a saved model folder (--save DIR, its\n"
      "                    checkpoints, --save-best) larger than SIZE into shards,\n"
      "                    model-0000N-of-0000K.safetensors and model.safetensors.index.json,\n"
      "                    as save_pretrained's max_shard_size: 5GB, 1.5GiB, 2MB, 4096\n"
      "                    (default: 5GB)\n"
      "  --quiet           print only errors and a one-line summary\n"
      "  --plan-check      check the memory plan while training: poison each tensor's bytes\n"
      "                    when it dies and stop on any read of bytes it no longer owns\n"
      "                    (a CPU trainer built with bertc --plan-check)\n"
      "  --help            show this help\n",
      data.trainData[0] ? data.trainData : "none, --data is required",
      data.vocabFile[0] ? data.vocabFile : "none", initDefault.c_str(),
      data.adapterCheckpoint[0] ? data.adapterCheckpoint : "none: drawn from the seed",
      stepsDefault.c_str(), epochsDefault.c_str(), static_cast<unsigned long long>(train.seed),
      data.groupByLength ? " (default: on)" : "", data.evalData[0] ? data.evalData : "none");
}

namespace {

/// Parses a non-negative decimal integer (at most `max`) given to `flag`.
uint64_t parseCount(const std::string &flag, const std::string &text,
                    uint64_t max = uint64_t(INT64_MAX)) {
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  // strtoull would skip leading spaces and negate a '-': the text must start with a digit.
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) || *end != '\0' ||
      errno == ERANGE || value > max)
    throw UsageError(flag + " expects a non-negative integer, got '" + text + "'");
  return value;
}

/// Parses --max-shard-size's value: a byte size of at least 1 byte (bertc/abi/byte_size.h).
uint64_t parseShardSize(const std::string &text) {
  std::optional<int64_t> bytes = parseByteSize(text);
  if (!bytes || *bytes < 1)
    throw UsageError("--max-shard-size expects a size of at least 1 byte (5GB, 1.5GiB, 2MB, "
                     "4096), got '" +
                     text + "'");
  return uint64_t(*bytes);
}

/// `path` absolute, with symbolic links resolved as far as it exists.
std::filesystem::path resolvedPath(const std::string &path) {
  std::error_code unresolved;
  std::filesystem::path named = namedPath(path);
  std::filesystem::path resolved = std::filesystem::weakly_canonical(named, unresolved);
  return unresolved ? named : resolved;
}

/// Whether `inner` is `outer` or lies inside it.
bool isSameOrInside(const std::string &inner, const std::string &outer) {
  const std::filesystem::path in = resolvedPath(inner), out = resolvedPath(outer);
  auto a = in.begin();
  for (auto b = out.begin(); b != out.end(); ++a, ++b)
    if (a == in.end() || *a != *b)
      return false;
  return true;
}

/// Each new best model replaces --save-best's folder whole, so it must not hold what the run
/// reads or writes elsewhere, nor files of the user's that are not a best model of bertc's.
void requireSaveBestFolderOfItsOwn(const TrainerOptions &options) {
  namespace fs = std::filesystem;
  const std::string replacedWhole =
      "--save-best " + options.saveBest + ": the folder is replaced whole at each new best score";
  const std::pair<const char *, const std::string *> others[] = {
      {"--save", &options.save},    {"--log", &options.log},     {"--data", &options.data},
      {"--eval", &options.eval},    {"--vocab", &options.vocab}, {"--init", &options.init},
      {"--resume", &options.resume}};
  for (const auto &[flag, path] : others)
    if (!path->empty() && isSameOrInside(*path, options.saveBest))
      throw SaveError(replacedWhole + ", and " + flag + " " + *path +
                      " is in it: give --save-best a folder of its own");
  const fs::path best = namedPath(options.saveBest);
  std::error_code unreadable; // what cannot be read here is left to the save to report
  if (fs::is_directory(best, unreadable) && !fs::is_empty(best, unreadable) &&
      !fs::exists(best / "eval_results.json", unreadable))
    throw SaveError(replacedWhole + ", and it holds files but no eval_results.json (not a best "
                                    "model bertc saved): give a new or empty folder");
}

} // namespace

bool savesToFile(const std::string &path) {
  const std::string suffix = ".safetensors";
  return path.size() >= suffix.size() &&
         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void requireWritableSaveTargets(const TrainerOptions &options) {
  if (!options.save.empty()) {
    if (!savesToFile(options.save))
      requireWritableFolder("--save", options.save);
    else if (std::filesystem::is_directory(options.save))
      throw SaveError("--save " + options.save + ": is a folder, not a .safetensors file");
    else
      requireWritableFolder("--save", folderOf(namedPath(options.save)).string());
  }
  if (!options.mergeAdapter.empty())
    requireWritableFolder("--merge-adapter", options.mergeAdapter);
  if (!options.saveBest.empty()) {
    std::filesystem::path best = namedPath(options.saveBest);
    if (std::filesystem::exists(best) && !std::filesystem::is_directory(best))
      throw SaveError("--save-best " + options.saveBest + ": exists and is not a folder");
    requireSaveBestFolderOfItsOwn(options);
    // The best model is assembled beside its folder and renamed into place.
    requireWritableFolder("--save-best", best.parent_path().string());
  }
}

TrainerOptions parseTrainerFlags(const JobDataSettings &data, int argc, char **argv) {
  TrainerOptions options;
  std::optional<int64_t> evalEvery;
  bool vocabGiven = false;
  options.data = data.trainData;
  options.vocab = data.vocabFile;
  options.init = data.initCheckpoint;
  options.initAdapter = data.adapterCheckpoint;
  options.eval = data.evalData;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h" || flag == "--plan-check" || flag == "--quiet" ||
        flag == "--group-by-length") {
      options.help |= flag == "--help" || flag == "-h";
      options.planCheck |= flag == "--plan-check";
      options.quiet |= flag == "--quiet";
      options.groupByLength |= flag == "--group-by-length";
      continue;
    }
    std::optional<std::string> inlineValue;
    if (size_t equals = flag.find('='); flag.rfind("--", 0) == 0 && equals != flag.npos) {
      inlineValue = flag.substr(equals + 1);
      flag.resize(equals);
    }
    static const std::set<std::string> known = {
        "--data",        "--vocab",      "--init",       "--steps",          "--epochs",
        "--log",         "--save",       "--save-every", "--resume",         "--seed",
        "--eval",        "--eval-every", "--save-best",  "--max-shard-size", "--merge-adapter",
        "--init-adapter"};
    if (!known.count(flag))
      throw UsageError("unknown flag '" + flag + "'");
    if (!inlineValue && i + 1 >= argc)
      throw UsageError(flag + " needs a value");
    std::string value = inlineValue ? *inlineValue : argv[++i];
    if (flag == "--data")
      options.data = value;
    else if (flag == "--vocab") {
      options.vocab = value;
      vocabGiven = true;
    } else if (flag == "--init") {
      options.init = value;
      options.initGiven = true;
    } else if (flag == "--log")
      options.log = value;
    else if (flag == "--save")
      options.save = value;
    else if (flag == "--resume")
      options.resume = value;
    else if (flag == "--steps")
      options.steps = int64_t(parseCount(flag, value));
    else if (flag == "--seed")
      options.seed = parseCount(flag, value, UINT64_MAX);
    else if (flag == "--epochs")
      options.epochs = int64_t(parseCount(flag, value));
    else if (flag == "--save-every")
      options.saveEvery = int64_t(parseCount(flag, value));
    else if (flag == "--eval")
      options.eval = value;
    else if (flag == "--eval-every")
      evalEvery = int64_t(parseCount(flag, value));
    else if (flag == "--save-best")
      options.saveBest = value;
    else if (flag == "--merge-adapter")
      options.mergeAdapter = value;
    else if (flag == "--init-adapter")
      options.initAdapter = value;
    else if (flag == "--max-shard-size")
      options.maxShardBytes = parseShardSize(value);
  }
  if (options.epochs && *options.epochs < 1)
    throw UsageError("--epochs must be at least 1");
  if (evalEvery && *evalEvery < 1)
    throw UsageError("--eval-every must be at least 1 (without it: at each epoch's end)");
  if (evalEvery && options.eval.empty())
    throw UsageError("--eval-every evaluates the --eval data: pass --eval FILE");
  options.evalEvery = evalEvery.value_or(0);
  // A vocabulary given but missing would leave a saved model folder without its vocab.txt.
  if (vocabGiven && !std::filesystem::is_regular_file(options.vocab))
    throw std::runtime_error("--vocab " + options.vocab + ": no such file");
  for (const auto &[flag, path] :
       {std::pair<const char *, const std::string *>{"--data", &options.data},
        {"--eval", &options.eval},
        {"--vocab", &options.vocab},
        {"--init", &options.init}})
    if (!options.log.empty() && !path->empty() && resolvedPath(options.log) == resolvedPath(*path))
      throw UsageError("--log " + options.log + " is the " + flag +
                       " file: the metrics log would overwrite it");
  if (options.saveEvery && *options.saveEvery < 1)
    throw UsageError("--save-every must be at least 1");
  if (options.saveEvery && (options.save.empty() || savesToFile(options.save)))
    throw UsageError("--save-every writes checkpoint folders into the --save folder: pass "
                     "--save DIR (not a .safetensors file)");
  if (!options.saveBest.empty() && options.eval.empty())
    throw UsageError("--save-best keeps the model with the best eval score: pass --eval FILE");
  if (!options.saveBest.empty() && savesToFile(options.saveBest))
    throw UsageError("--save-best writes a model folder: pass a folder, not a .safetensors file");
  if (options.data.empty() && !options.help)
    throw UsageError("no training data: pass --data FILE");
  return options;
}

} // namespace bertc

// main() of every generated trainer: flags, data, the one arena allocation, parameter
// initialisation or checkpoint loading, the optimizer-step loop (gradient accumulation,
// learning-rate schedule, metrics) and the final checkpoint. The model itself is the
// generated kTrainerPlan, bertcMicroStep and bertcOptimizerStep (trainer_plan.h).
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/jsonl_data.h"
#include "bertc/runtime/metrics_log.h"
#include "bertc/runtime/plan_check.h"
#include "bertc/runtime/safetensors.h"
#include "bertc/runtime/schedule.h"
#include "bertc/runtime/trainer_plan.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

namespace {

using namespace bertc;

constexpr int kExitRuntimeError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitOutOfMemory = 3;

/// Bad command line: reported with the usage text, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The arena does not fit in memory: exit code 3.
struct ArenaAllocationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string data;
  std::string init;
  std::string log;
  std::string save;
  std::optional<int64_t> steps;
  std::optional<int64_t> epochs;
  uint64_t seed;
  bool planCheck = false;
  bool help = false;
};

void printUsage(std::FILE *out) {
  const TrainSettings &train = kTrainerPlan.train;
  std::string initDefault = train.initCheckpoint[0]
                                ? train.initCheckpoint + std::string("; --init= for random")
                                : "none: random from the seed";
  std::string stepsDefault =
      train.steps > 0 ? " (default: " + std::to_string(train.steps) + ")" : "";
  std::fprintf(
      out,
      "usage: trainer [--data FILE] [--init FILE|DIR] [--steps N | --epochs N] [--log FILE]\n"
      "               [--save FILE|DIR] [--seed N] [--plan-check] [--help]\n"
      "  --data FILE     pre-tokenized JSONL training data (default: %s)\n"
      "  --init PATH     start from a safetensors file, or a Hugging Face checkpoint\n"
      "                  directory holding model.safetensors (default: %s)\n"
      "  --steps N       optimizer steps; overrides --epochs (0: load and save only)%s\n"
      "  --epochs N      passes over the data (default: %lld)\n"
      "  --log FILE      write one JSON line of metrics per optimizer step\n"
      "  --save PATH     write the parameters as safetensors at the end (a directory gets\n"
      "                  model.safetensors)\n"
      "  --seed N        seed of initialisation, shuffling and dropout (default: %llu)\n"
      "  --plan-check    check the memory plan while training: poison each tensor's bytes\n"
      "                  when it dies and stop on any read of bytes it no longer owns\n"
      "  --help          show this help\n",
      train.trainData[0] ? train.trainData : "none, --data is required",
      initDefault.c_str(),
      stepsDefault.c_str(),
      static_cast<long long>(train.epochs), static_cast<unsigned long long>(train.seed));
}

/// Parses a non-negative decimal integer (at most `max`) given to `flag`.
uint64_t parseCount(const std::string &flag, const std::string &text,
                    uint64_t max = uint64_t(INT64_MAX)) {
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE || value > max)
    throw UsageError(flag + " expects a non-negative integer, got '" + text + "'");
  return value;
}

/// Flags accept "--flag VALUE" and "--flag=VALUE".
Options parseFlags(int argc, char **argv) {
  Options options;
  options.data = kTrainerPlan.train.trainData;
  options.init = kTrainerPlan.train.initCheckpoint;
  options.seed = kTrainerPlan.train.seed;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      options.help = true;
      continue;
    }
    if (flag == "--plan-check") {
      options.planCheck = true;
      continue;
    }
    std::optional<std::string> inlineValue;
    if (size_t equals = flag.find('='); flag.rfind("--", 0) == 0 && equals != flag.npos) {
      inlineValue = flag.substr(equals + 1);
      flag.resize(equals);
    }
    static const std::set<std::string> known = {"--data", "--init", "--steps", "--epochs",
                                                "--log",  "--save", "--seed"};
    if (!known.count(flag))
      throw UsageError("unknown flag '" + flag + "'");
    if (!inlineValue && i + 1 >= argc)
      throw UsageError(flag + " needs a value");
    std::string value = inlineValue ? *inlineValue : argv[++i];
    if (flag == "--data")
      options.data = value;
    else if (flag == "--init")
      options.init = value;
    else if (flag == "--log")
      options.log = value;
    else if (flag == "--save")
      options.save = value;
    else if (flag == "--steps")
      options.steps = int64_t(parseCount(flag, value));
    else if (flag == "--seed")
      options.seed = parseCount(flag, value, UINT64_MAX);
    else if (flag == "--epochs")
      options.epochs = int64_t(parseCount(flag, value));
  }
  if (options.epochs && *options.epochs < 1)
    throw UsageError("--epochs must be at least 1");
  if (options.data.empty() && !options.help)
    throw UsageError("no training data: pass --data FILE");
  return options;
}

std::vector<int64_t> shapeOf(const ParamSlot &param) {
  return std::vector<int64_t>(param.shape, param.shape + param.rank);
}

float *valuesOf(std::byte *arena, const ParamSlot &param) {
  return reinterpret_cast<float *>(arena + param.offset);
}

/// Step counter of the initialisation's random numbers: dropout keys by the 1-based
/// optimizer step, so step 0 never collides with it.
constexpr uint64_t kInitRandomStep = 0;

/// Hugging Face's _init_weights for parameter `p`: normal(0, initializerRange), zeros or
/// ones. Element i is a Box–Muller transform of the counter-based uniforms (seed, p, 2i) and
/// (seed, p, 2i+1), so each value depends on nothing but the seed and its position.
void initializeParameter(std::byte *arena, size_t p, uint64_t seed) {
  const double twoPi = 6.283185307179586;
  const ParamSlot &param = kTrainerPlan.params[p];
  float *values = valuesOf(arena, param);
  for (int64_t i = 0; i < param.numel; ++i) {
    if (param.init != ParamInit::Normal) {
      values[i] = param.init == ParamInit::Ones ? 1.0f : 0.0f;
      continue;
    }
    double u1 = 1.0 - counterUniform(seed, kInitRandomStep, uint32_t(p), 2 * uint64_t(i));
    double u2 = counterUniform(seed, kInitRandomStep, uint32_t(p), 2 * uint64_t(i) + 1);
    values[i] = float(kTrainerPlan.train.initializerRange * std::sqrt(-2.0 * std::log(u1)) *
                      std::cos(twoPi * u2));
  }
}

/// Names a parameter may carry in a Hugging Face checkpoint, preferred first: its own, the
/// legacy LayerNorm gamma/beta, and each without the "bert." prefix of task models.
std::vector<std::string> checkpointNames(const std::string &name) {
  std::vector<std::string> names = {name};
  for (auto [modern, legacy] : {std::pair{".LayerNorm.weight", ".LayerNorm.gamma"},
                                std::pair{".LayerNorm.bias", ".LayerNorm.beta"}}) {
    size_t size = std::strlen(modern);
    if (name.size() > size && name.compare(name.size() - size, size, modern) == 0)
      names.push_back(name.substr(0, name.size() - size) + legacy);
  }
  for (size_t i = 0, count = names.size(); i < count; ++i)
    if (names[i].rfind("bert.", 0) == 0)
      names.push_back(names[i].substr(5));
  return names;
}

/// Loads the parameters from a safetensors file (or DIR/model.safetensors). Every encoder
/// parameter ("bert.*") must be there; a task-head parameter the file lacks (a pretraining
/// checkpoint has no classifier) is initialised from the seed, as Hugging Face's
/// from_pretrained does, and listed. Tensors the model does not use are counted, not read.
void loadParameters(std::byte *arena, const std::string &initPath, uint64_t seed) {
  std::string path = std::filesystem::is_directory(initPath)
                         ? (std::filesystem::path(initPath) / "model.safetensors").string()
                         : initPath;
  SafetensorsReader reader(path);
  std::set<std::string> used;
  std::string freshHead;
  for (size_t p = 0; p < kTrainerPlan.numParams; ++p) {
    const ParamSlot &param = kTrainerPlan.params[p];
    std::vector<std::string> names = checkpointNames(param.name);
    auto found = std::find_if(names.begin(), names.end(),
                              [&](const std::string &name) { return reader.contains(name); });
    bool isEncoder = std::string(param.name).rfind("bert.", 0) == 0;
    if (found == names.end() && !isEncoder) {
      initializeParameter(arena, p, seed);
      freshHead += (freshHead.empty() ? "" : ", ") + std::string(param.name);
      continue;
    }
    std::string fileName = found == names.end() ? param.name : *found;
    reader.readF32(fileName, shapeOf(param), valuesOf(arena, param));
    used.insert(fileName);
  }
  std::printf("init: %zu tensors loaded from %s, %zu in the file not used by this model "
              "ignored\n",
              used.size(), path.c_str(), reader.entries().size() - used.size());
  if (!freshHead.empty())
    std::printf("init: not in the checkpoint, initialised from the seed: %s\n",
                freshHead.c_str());
}

/// Writes every parameter, by its Hugging Face name, to PATH or PATH/model.safetensors.
void saveParameters(std::byte *arena, const std::string &savePath) {
  std::filesystem::path path = savePath;
  if (std::filesystem::is_directory(path) || savePath.back() == '/') {
    std::filesystem::create_directories(path);
    path /= "model.safetensors";
  }
  std::vector<TensorToWrite> tensors;
  for (size_t p = 0; p < kTrainerPlan.numParams; ++p) {
    const ParamSlot &param = kTrainerPlan.params[p];
    tensors.push_back({param.name, shapeOf(param), valuesOf(arena, param)});
  }
  writeSafetensors(path.string(), tensors, {{"format", "pt"}});
  std::printf("saved %s\n", path.string().c_str());
}

/// Runs `totalSteps` optimizer steps. A step accumulates `accumulation` micro-batches but
/// never crosses an epoch boundary (as the Hugging Face Trainer), so an epoch is
/// ceil(rows / batch) steps and its last step may see fewer rows; the loss normalizer is
/// the step's row count, so the loss is always the mean over the rows actually seen.
void train(std::byte *arena, const Dataset &data, const Options &options,
           int64_t totalSteps, MetricsLog *log, PlanChecker *planCheck) {
  const TrainerPlan &plan = kTrainerPlan;
  Batcher batcher(data, plan.train.microBatch, plan.train.shuffle, options.seed);
  int64_t warmup = warmupSteps(plan.train.warmup, totalSteps);
  const float *microLoss = reinterpret_cast<const float *>(arena + plan.inputs.loss);
  for (int64_t step = 1; step <= totalSteps; ++step) {
    auto start = std::chrono::steady_clock::now();
    std::memset(arena + plan.gradients.offset, 0, plan.gradients.bytes);
    StepContext context{};
    context.arena = arena;
    context.lossNormalizer = float(batcher.rowsInNext(plan.train.accumulation));
    context.lr = scheduledLr(plan.train.schedule, plan.train.lr, step, totalSteps, warmup);
    context.step = step;
    context.seed = options.seed;
    context.scratch = reinterpret_cast<float *>(arena + plan.scratch.offset);
    context.planCheck = planCheck;
    float loss = 0.0f;
    int64_t epoch = 0;
    for (int64_t micro = 0; micro < plan.train.accumulation; ++micro) {
      MicroBatch batch = batcher.next(arena, plan.inputs);
      if (micro == 0)
        epoch = batch.epoch;
      context.batch = batch.rows;
      context.seq = batch.seq;
      bertcMicroStep(context);
      loss += *microLoss;
      if (batch.endsEpoch)
        break;
    }
    bertcOptimizerStep(context);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (log)
      log->append({step, epoch, loss, context.lr, seconds});
    std::printf("step %lld/%lld  loss %.6f  lr %.2e\n", static_cast<long long>(step),
                static_cast<long long>(totalSteps), double(loss), double(context.lr));
    std::fflush(stdout);
  }
}

/// The compiler sizes the attention scratch from its own copy of the kernels' formula;
/// a plan whose scratch is too small for this runtime is refused before any work.
void checkScratch() {
  const TrainerPlan &plan = kTrainerPlan;
  size_t needed = size_t(cpu::attentionScratchFloats(plan.train.seqLen)) * sizeof(float);
  if (plan.scratch.bytes > 0 && plan.scratch.bytes < needed)
    throw std::runtime_error("the plan's attention scratch is " +
                             std::to_string(plan.scratch.bytes) + " bytes but the kernels need " +
                             std::to_string(needed) + ": rebuild the trainer with this bertc");
}

using ArenaPtr = std::unique_ptr<std::byte, decltype(&std::free)>;

/// The one allocation of the run: kTrainerPlan.arenaBytes, 64-byte aligned.
ArenaPtr allocateArena() {
  size_t bytes = (std::max<size_t>(kTrainerPlan.arenaBytes, 1) + 63) / 64 * 64;
  auto *arena = static_cast<std::byte *>(std::aligned_alloc(64, bytes));
  if (!arena) {
    char gib[32];
    std::snprintf(gib, sizeof gib, "%.2f", double(bytes) / double(1u << 30));
    throw ArenaAllocationError("cannot allocate the arena: " + std::to_string(bytes) +
                               " bytes (" + gib + " GiB) needed");
  }
  return ArenaPtr(arena, &std::free);
}

int run(int argc, char **argv) {
  Options options = parseFlags(argc, argv);
  if (options.help) {
    printUsage(stdout);
    return 0;
  }
  const TrainSettings &settings = kTrainerPlan.train;
  Dataset data = loadJsonlDataset(
      options.data,
      {settings.seqLen, settings.numLabels, settings.vocab, settings.typeVocab});
  int64_t stepsPerEpoch =
      (int64_t(data.rows.size()) + settings.batch - 1) / settings.batch;
  int64_t totalSteps = options.steps    ? *options.steps
                       : options.epochs ? *options.epochs * stepsPerEpoch
                       : settings.steps > 0 ? settings.steps
                                            : settings.epochs * stepsPerEpoch;
  std::unique_ptr<MetricsLog> log =
      options.log.empty() ? nullptr : std::make_unique<MetricsLog>(options.log);

  checkScratch();
  ArenaPtr arena = allocateArena();
  if (options.init.empty()) {
    for (size_t p = 0; p < kTrainerPlan.numParams; ++p)
      initializeParameter(arena.get(), p, options.seed);
  } else {
    loadParameters(arena.get(), options.init, options.seed);
  }
  std::memset(arena.get() + kTrainerPlan.optimizerState.offset, 0,
              kTrainerPlan.optimizerState.bytes);
  std::unique_ptr<PlanChecker> planCheck =
      options.planCheck ? std::make_unique<PlanChecker>(arena.get(), kTrainerPlan.arenaBytes)
                        : nullptr;
  train(arena.get(), data, options, totalSteps, log.get(), planCheck.get());
  if (!options.save.empty())
    saveParameters(arena.get(), options.save);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError &error) {
    std::fprintf(stderr, "trainer: error: %s\n", error.what());
    printUsage(stderr);
    return kExitUsage;
  } catch (const ArenaAllocationError &error) {
    std::fprintf(stderr, "trainer: error: %s\n", error.what());
    return kExitOutOfMemory;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "trainer: error: out of host memory\n");
    return kExitOutOfMemory;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "trainer: error: %s\n", error.what());
    return kExitRuntimeError;
  }
}

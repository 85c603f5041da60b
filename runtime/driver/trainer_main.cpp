// main() of every generated trainer: data, the parameters' start (parameter_init.cpp's,
// or a checkpoint's), the optimizer-step loop (gradient accumulation, learning-rate
// schedule, metrics, progress, periodic checkpoints) and the final save. The model itself
// is the generated trainer's plan and steps (bertc_trainer(), bertc/abi/trainer.h), which
// run through the target's StepRunner (step_runner.h: the one arena allocation, and on a
// GPU the copies between host and device); the flags are trainer_options.cpp's.
#include "evaluation.h"
#include "mixed_precision.h"
#include "parameter_init.h"
#include "trainer_options.h"

#include "bertc/abi/trainer.h"
#include "bertc/runtime/checkpoint.h"
#include "bertc/runtime/jsonl_data.h"
#include "bertc/runtime/lora_adapter.h"
#include "bertc/runtime/metrics_log.h"
#include "bertc/runtime/plan_check.h"
#include "bertc/runtime/progress.h"
#include "bertc/runtime/schedule.h"
#include "bertc/runtime/step_runner.h"
#include "bertc/runtime/task_data.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <unistd.h>

namespace {

using namespace bertc;

constexpr int kExitRuntimeError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitOutOfMemory = 3;

/// How this run trains: from scratch, or continuing a checkpoint.
struct RunSetup {
  uint64_t seed;
  bool groupByLength;
  int64_t startStep; ///< optimizer steps already done (by the resumed run)
  int64_t totalSteps;
  BatcherState data;                   ///< where the data stream starts
  DynamicLossScaler::State lossScaler; ///< fp16's loss scale where the run starts
  TrainerState checkpoint; ///< what --save-every records, less the step and data position
};

/// Stops a fp16 run whose loss scale has been halved to 0: its gradients overflowed at every
/// scale, so the parameters or the loss hold inf or NaN, and every later step would be
/// skipped (a checkpoint of it could not be resumed either).
void requireLossScaleAboveZero(const TrainerPlan &plan, const DynamicLossScaler &scaler,
                               int64_t step) {
  if (!plan.lossScaling || scaler.scale() > 0.0f)
    return;
  throw std::runtime_error(
      "step " + std::to_string(step) + ": the fp16 loss scale has fallen to 0 (" +
      std::to_string(scaler.skippedSteps()) +
      " steps skipped): the gradients overflow at every scale, so the model or its loss holds "
      "inf or NaN; lower [train] lr, clip the gradients ([train] max_grad_norm) or train in "
      "bf16 or fp32 (--precision)");
}

/// Runs `work` between `opTimes`' begin and end for `op` (just runs it without a timer).
template <typename Work> void timed(OpTimes *opTimes, const char *op, const Work &work) {
  if (opTimes)
    opTimes->begin(op);
  work();
  if (opTimes)
    opTimes->end();
}

/// Runs optimizer steps startStep+1 .. totalSteps. A step accumulates `accumulation`
/// micro-batches but never crosses an epoch boundary (as the Hugging Face Trainer), so an
/// epoch is ceil(rows / batch) steps and its last step may see fewer rows; the loss
/// normalizer is the step's row count, so the loss is always the mean over the rows seen.
/// Every `saveEvery` steps the state goes to a checkpoint; with an `evaluator`, the eval set
/// is scored when it says so; with `opTimes`, each step's ops, the gradients' zeroing and
/// the optimizer step are timed (all but the run's first step counted). Returns the
/// batcher's final state.
BatcherState train(StepRunner &runner, const Dataset &data, const TrainerOptions &options,
                   const TokenizerFiles &tokenizer, const RunSetup &setup, MetricsLog *log,
                   PlanChecker *planCheck, OpTimes *opTimes, ProgressDisplay &progress,
                   TrainingEvaluator *evaluator) {
  const TrainerPlan &plan = runner.plan();
  Batcher batcher(data, plan.train.microBatch, plan.train.shuffle, setup.seed,
                  setup.groupByLength ? plan.train.batch : 0);
  batcher.restore(setup.data);
  int64_t warmup = warmupSteps(plan.train.warmup, setup.totalSteps);
  DynamicLossScaler scaler;
  scaler.restore(setup.lossScaler);
  // The log and the progress line show the scale only for a run that has one.
  auto reportedScale = [&] {
    return plan.lossScaling ? std::optional<double>(scaler.scale()) : std::nullopt;
  };
  for (int64_t step = setup.startStep + 1; step <= setup.totalSteps; ++step) {
    auto start = std::chrono::steady_clock::now();
    timed(opTimes, kTimedGradientZeroing, [&] { runner.zeroGradients(); });
    StepContext context{};
    context.opTimer = opTimes;
    context.lossNormalizer = float(batcher.lossItemsInNext(plan.train.accumulation));
    // The schedule advances with the updates that ran, as the Hugging Face Trainer steps its
    // scheduler only when the optimizer stepped: a skipped fp16 step keeps the rate.
    context.lr = scheduledLr(plan.train.schedule, plan.train.lr, step - scaler.skippedSteps(),
                             setup.totalSteps, warmup);
    context.step = step;
    context.seed = setup.seed;
    context.planCheck = planCheck;
    context.lossScale = scaler.scale();
    // A plan that updates in the backward (no loss scaling, so no skipped steps) runs
    // AdamW inside the micro-step: it needs the update's count there.
    context.adamStep = step - scaler.skippedSteps();
    float loss = 0.0f;
    int64_t epoch = 0, rows = 0;
    bool endsEpoch = false;
    TokenCounts tokens;
    for (int64_t micro = 0; micro < plan.train.accumulation; ++micro) {
      MicroBatch batch = batcher.next(runner.hostArena(), plan.inputs);
      if (micro == 0)
        epoch = batch.epoch;
      rows += batch.rows;
      tokens += TokenCounts{batch.realTokens, batch.rows * batch.seq};
      context.batch = batch.rows;
      context.seq = batch.seq;
      context.firstRow = rows - batch.rows;
      context.lastMicroStep = batch.endsEpoch || micro + 1 == plan.train.accumulation;
      loss += runner.microStep(context);
      endsEpoch = batch.endsEpoch;
      if (batch.endsEpoch)
        break;
    }
    OptimizerStepOutcome update;
    timed(opTimes, kTimedOptimizerStep, [&] { update = runner.optimizerStep(context, scaler); });
    if (opTimes)
      opTimes->finishStep(/*counted=*/step > setup.startStep + 1);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (log)
      log->append({step, epoch, loss, context.lr, seconds, tokens.padFraction(), reportedScale(),
                   scaler.skippedSteps(), update.gradNorm});
    progress.lossScale(reportedScale(), scaler.skippedSteps());
    progress.step(step, epoch, loss, context.lr, rows);
    requireLossScaleAboveZero(plan, scaler, step);
    // The evaluation of a checkpoint's step comes first: a run stopped between the two then
    // resumes from an earlier checkpoint and evaluates the step again.
    if (evaluator && evaluator->due(step, endsEpoch, step == setup.totalSteps))
      evaluator->run(step, epoch, runner, setup.seed, planCheck, log, progress);
    if (options.saveEvery && step % *options.saveEvery == 0) {
      TrainerState state = setup.checkpoint;
      state.globalStep = step;
      state.data = batcher.state();
      state.lossScaler = scaler.state();
      runner.pullState();
      progress.note("saved " + saveCheckpoint(options.save, plan, runner.hostArena(), state,
                                              tokenizer, options.maxShardBytes));
    }
  }
  return batcher.state();
}

/// What --save-every records besides the step and data position: the run's settings.
TrainerState checkpointSettings(const TrainSettings &train, const TrainerOptions &options,
                                const Dataset &data, const RunSetup &setup) {
  TrainerState state;
  state.maxSteps = setup.totalSteps;
  state.seed = setup.seed;
  state.batch = train.batch;
  state.microBatch = train.microBatch;
  state.accumulation = train.accumulation;
  state.seqLen = train.seqLen;
  state.shuffle = train.shuffle;
  state.groupByLength = setup.groupByLength;
  state.lr = train.lr;
  state.schedule = train.schedule;
  state.warmupSteps = warmupSteps(train.warmup, setup.totalSteps);
  state.dataPath = options.data;
  state.dataRows = int64_t(data.rows.size());
  state.dataFingerprint = datasetFingerprint(data);
  return state;
}

/// The optimizer steps of `epochs` passes over `rows` rows. An epoch is ceil(rows /
/// microBatch) micro-batches taken `accumulation` at a time, and train() never lets a step
/// cross an epoch's end, so its last step takes the rows that remain (fewer than the batch
/// when the batch does not divide the rows). Throws UsageError when the count overflows.
int64_t stepsForEpochs(const TrainSettings &train, int64_t epochs, size_t rows) {
  int64_t microBatches = (int64_t(rows) + train.microBatch - 1) / train.microBatch;
  int64_t stepsPerEpoch = (microBatches + train.accumulation - 1) / train.accumulation;
  int64_t steps;
  if (__builtin_mul_overflow(epochs, stepsPerEpoch, &steps))
    throw UsageError(std::to_string(epochs) + " epochs of " + std::to_string(stepsPerEpoch) +
                     " steps are more steps than a run can count");
  return steps;
}

using Inform = std::function<void(const std::string &)>;

/// What this run would have saved at the step `saved` was saved at: its settings, warmup
/// over the checkpoint's schedule, and the data position and token counts of a batcher
/// moved past that many steps (a pass over the rows those steps read, without the model).
TrainerState expectedCheckpoint(const TrainerPlan &plan, const Dataset &data, const RunSetup &setup,
                                const TrainerState &saved) {
  const TrainSettings &train = plan.train;
  TrainerState expected = setup.checkpoint;
  expected.maxSteps = saved.maxSteps;
  expected.warmupSteps = warmupSteps(train.warmup, saved.maxSteps);
  expected.globalStep = saved.globalStep;
  Batcher replay(data, train.microBatch, train.shuffle, setup.seed,
                 setup.groupByLength ? train.batch : 0);
  replay.skipSteps(saved.globalStep, train.accumulation);
  expected.data = replay.state();
  return expected;
}

/// Decides where training starts and fills the arena's parameters and moments for it:
/// 1. the total steps: --steps, else --epochs, else the resumed run's, else the plan's;
/// 2. with a checkpoint (`resumeDir`), its parameters, moments, step and data position; the
///    rest of its state must be what this run (its job and flags) would have saved there
///    (a LoRA checkpoint holds the adapters: the frozen model is --init's, or the seed's,
///    and must be the one the checkpoint's fingerprint names);
/// 3. otherwise step 0, with the parameters of --init or drawn from the seed.
RunSetup startRun(const TrainerOptions &options, const Dataset &data, const std::string &resumeDir,
                  StepRunner &runner, const Inform &inform) {
  const TrainerPlan &plan = runner.plan();
  const TrainSettings &settings = plan.train;
  std::byte *arena = runner.hostArena();
  std::memset(arena + plan.optimizerState.offset, 0, plan.optimizerState.bytes);
  RunSetup setup{};
  setup.seed = options.seed.value_or(settings.seed);
  // The model's parameters, then (`adapters`) the LoRA adapters --init-adapter gives.
  auto initialParameters = [&](bool adapters) {
    if (options.init.empty())
      for (size_t p = 0; p < plan.numParams; ++p)
        initializeParameter(plan, arena, p, setup.seed);
    else
      loadParameters(plan, arena, options.init, setup.seed, inform);
    if (adapters && !options.initAdapter.empty())
      loadAdapters(plan, arena, options.initAdapter, inform);
  };
  std::optional<TrainerState> resumed;
  if (!resumeDir.empty()) {
    // A LoRA checkpoint holds every adapter, not the frozen model they were trained on.
    if (hasAdapters(plan))
      initialParameters(/*adapters=*/false);
    resumed = loadCheckpoint(resumeDir, plan, arena);
  }
  setup.groupByLength = options.groupByLength || plan.data.groupByLength;
  setup.totalSteps = options.steps    ? *options.steps
                     : options.epochs ? stepsForEpochs(settings, *options.epochs, data.rows.size())
                     : resumed        ? resumed->maxSteps
                     : settings.steps > 0
                         ? settings.steps
                         : stepsForEpochs(settings, settings.epochs, data.rows.size());
  setup.checkpoint = checkpointSettings(settings, options, data, setup);
  // The frozen model LoRA adapters train on, which their checkpoints do not hold: loaded
  // above when resuming, below otherwise.
  auto fingerprintFrozenModel = [&] {
    if (hasAdapters(plan))
      setup.checkpoint.frozenModelFingerprint = frozenModelFingerprint(plan, arena);
  };
  if (resumed) {
    fingerprintFrozenModel();
    checkResumable(*resumed, expectedCheckpoint(plan, data, setup, *resumed), plan.lossScaling,
                   resumeDir);
    if (resumed->globalStep > setup.totalSteps)
      throw std::runtime_error(resumeDir + ": the checkpoint is at step " +
                               std::to_string(resumed->globalStep) + ", past the run's " +
                               std::to_string(setup.totalSteps) + " steps");
    setup.startStep = resumed->globalStep;
    setup.data = resumed->data;
    setup.lossScaler = resumed->lossScaler;
    inform("resume: " + resumeDir + " at step " + std::to_string(setup.startStep));
    if (resumed->maxSteps != setup.totalSteps)
      inform("resume: the schedule now spans " + std::to_string(setup.totalSteps) +
             " steps, not the checkpoint's " + std::to_string(resumed->maxSteps) +
             ": the losses will differ from the uninterrupted run's");
  } else {
    initialParameters(/*adapters=*/true);
    fingerprintFrozenModel();
  }
  writeWorkingCopies(plan, arena);
  runner.pushState();
  return setup;
}

/// The [data] settings the trainer was compiled with, the vocabulary of --vocab, and the
/// plan's seq_len, to which rows are padded where the job asks for it (pad_to_seq_len).
DataSettings dataSettings(const JobDataSettings &settings, const std::string &vocab,
                          int64_t seqLen) {
  auto choice = [](int64_t value) { return value < 0 ? std::nullopt : std::optional(value != 0); };
  DataSettings data;
  data.fields = {settings.textField, settings.textPairField, settings.labelField};
  data.tokenizer = {vocab,
                    {choice(settings.doLowerCase), choice(settings.stripAccents),
                     choice(settings.tokenizeChineseChars)}};
  data.squad.docStride = size_t(settings.docStride);
  if (settings.maxQueryLength > 0)
    data.squad.maxQueryLength = size_t(settings.maxQueryLength);
  data.squad.maxAnswerLength = size_t(settings.maxAnswerLength);
  data.squad.nBest = size_t(settings.nBest);
  data.paddedLength = settings.padToSeqLen ? seqLen : 0;
  data.packing = settings.packing;
  data.eosId = settings.eosTokenId;
  data.chatTemplate = settings.chatTemplate;
  return data;
}

/// Writes the final --save: one safetensors file, or a Hugging Face model folder (sharded
/// above `maxShardBytes`).
void saveFinal(const std::string &save, const TokenizerFiles &tokenizer, uint64_t maxShardBytes,
               StepRunner &runner, ProgressDisplay &progress) {
  runner.pullState();
  const std::byte *arena = runner.hostArena();
  if (savesToFile(save)) {
    writeParameters(save, runner.plan(), arena);
    progress.note("saved " + save);
    return;
  }
  std::string files;
  for (const std::string &file :
       writeModelFolder(save, runner.plan(), arena, tokenizer, maxShardBytes))
    files += (files.empty() ? "" : ", ") + file;
  progress.note("saved " + save + " (" + files + ")");
}

/// --merge-adapter: the model with its adapters merged in, as a model folder.
void saveMerged(const std::string &dir, const TokenizerFiles &tokenizer, uint64_t maxShardBytes,
                StepRunner &runner, ProgressDisplay &progress) {
  runner.pullState();
  std::string files;
  for (const std::string &file :
       writeMergedModelFolder(dir, runner.plan(), runner.hostArena(), tokenizer, maxShardBytes))
    files += (files.empty() ? "" : ", ") + file;
  progress.note("merged the adapters into " + dir + " (" + files + ")");
}

int run(const Trainer &trainer, int argc, char **argv) {
  const TrainerPlan &plan = *trainer.plan;
  TrainerOptions options = parseTrainerFlags(plan.data, argc, argv);
  if (options.help) {
    printTrainerUsage(plan, stdout);
    return 0;
  }
  // A LoRA checkpoint holds the adapters alone: the model they train on is --init's again.
  if (!options.resume.empty() && options.initGiven && !hasAdapters(plan))
    throw UsageError("--init and --resume cannot be combined: a checkpoint brings its own "
                     "parameters");
  for (const auto &[flag, value] : {std::pair{"--merge-adapter", &options.mergeAdapter},
                                    {"--init-adapter", &options.initAdapter}})
    if (!value->empty() && !hasAdapters(plan))
      throw UsageError(std::string(flag) + " " + *value +
                       ": this trainer trains no LoRA adapters (its job has no [lora] table)");
  if (options.planCheck && !plan.planChecks)
    throw UsageError("--plan-check needs a trainer built with plan checks: rebuild it with "
                     "bertc --target cpu --plan-check");
  requireWritableSaveTargets(options);
  requireRunnableDevice(trainer);
  Inform inform = [&](const std::string &message) {
    if (!options.quiet)
      std::printf("%s\n", message.c_str());
  };
  const TrainSettings &settings = plan.train;
  requireKnownInputs(plan.inputs);
  DataLimits limits{settings.seqLen, settings.numLabels, settings.vocab, settings.typeVocab,
                    plan.data.padTokenId};
  const DataSettings loading = dataSettings(plan.data, options.vocab, settings.seqLen);
  TaskData training = loadTaskData(settings.task, options.data, limits, loading);
  inform(training.summary);
  const Dataset &data = training.data;
  // Saved folders carry the tokenizer the training data was tokenized with.
  TokenizerFiles tokenizer{options.vocab, training.tokenizer};
  std::unique_ptr<TrainingEvaluator> evaluator;
  if (!options.eval.empty()) {
    TaskData eval = loadTaskData(settings.task, options.eval, limits, loading);
    inform("eval " + eval.summary);
    evaluator = std::make_unique<TrainingEvaluator>(
        std::move(eval), EvalSettings{options.evalEvery, options.saveBest, tokenizer,
                                      options.maxShardBytes, !options.resume.empty()});
  }
  std::string resumeDir = options.resume.empty() ? "" : findCheckpoint(options.resume);
  std::unique_ptr<StepRunner> runner = makeStepRunner(trainer);
  RunSetup setup = startRun(options, data, resumeDir, *runner, inform);
  std::unique_ptr<MetricsLog> log;
  if (!options.log.empty())
    log = resumeDir.empty() ? std::make_unique<MetricsLog>(options.log)
                            : std::make_unique<MetricsLog>(options.log, setup.startStep);
  std::unique_ptr<PlanChecker> planCheck =
      options.planCheck ? std::make_unique<PlanChecker>(runner->hostArena(), plan.arenaBytes)
                        : nullptr;

  ProgressMode mode = options.quiet                ? ProgressMode::Quiet
                      : ::isatty(::fileno(stdout)) ? ProgressMode::Terminal
                                                   : ProgressMode::Lines;
  ProgressDisplay progress(mode, setup.startStep, setup.totalSteps);
  std::unique_ptr<OpTimes> opTimes = plan.timesOps ? runner->makeOpTimes() : nullptr;
  BatcherState end = train(*runner, data, options, tokenizer, setup, log.get(), planCheck.get(),
                           opTimes.get(), progress, evaluator.get());
  if (opTimes)
    progress.note(formatOpTimes(*opTimes));
  if (!options.save.empty())
    saveFinal(options.save, tokenizer, options.maxShardBytes, *runner, progress);
  if (!options.mergeAdapter.empty())
    saveMerged(options.mergeAdapter, tokenizer, options.maxShardBytes, *runner, progress);
  if (std::string report = runner->memoryReport(); !report.empty())
    progress.note(report);
  progress.finish(end.tokens.padFraction());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const Trainer &trainer = *bertc_trainer();
  if (trainer.abiVersion != kTrainerAbiVersion) {
    std::fprintf(stderr,
                 "trainer: error: built for trainer ABI %u but linked with a runtime of ABI %u: "
                 "rebuild it with bertc\n",
                 unsigned(trainer.abiVersion), unsigned(kTrainerAbiVersion));
    return kExitRuntimeError;
  }
  try {
    return run(trainer, argc, argv);
  } catch (const UsageError &error) {
    std::fprintf(stderr, "trainer: error: %s\n", error.what());
    printTrainerUsage(*trainer.plan, stderr);
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

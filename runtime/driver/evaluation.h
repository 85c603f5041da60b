// Evaluation while training: the eval set run through the generated bertcEvalStep (forward
// only, dropout off, at the training step's arena offsets), scored by task, logged, and the
// best model kept. The loop writes the eval rows into the arena's input slots and
// overwrites activations only: parameters and optimizer state are read, never written.
#pragma once

#include "bertc/runtime/checkpoint.h"
#include "bertc/runtime/metrics_log.h"
#include "bertc/runtime/plan_check.h"
#include "bertc/runtime/progress.h"
#include "bertc/runtime/safetensors_shards.h"
#include "bertc/runtime/step_runner.h"
#include "bertc/runtime/task_metrics.h"

#include <optional>
#include <string>

namespace bertc {

/// What one evaluation found: the task's scores and the mean loss over the eval rows
/// (over their labelled tokens for token classification).
struct EvalOutcome {
  EvalScores scores;
  double loss;
};

/// Runs every row of `data`, micro-batch by micro-batch in file order, through the
/// runner's eval step (bertcEvalStep) and scores the logits. `step` and `seed` only key
/// dropout, which is off.
EvalOutcome evaluate(StepRunner &runner, const TaskData &data, int64_t step, uint64_t seed,
                     PlanChecker *planCheck);

/// When to evaluate and where the best model goes (the trainer's --eval flags).
struct EvalSettings {
  int64_t every = 0;        ///< every N optimizer steps; 0: at the end of each epoch
  std::string saveBest;     ///< folder of the best model so far; "" to keep none
  TokenizerFiles tokenizer; ///< saved with the best model
  uint64_t maxShardBytes = kDefaultMaxShardBytes; ///< its largest weights file
  bool resumed = false; ///< a resumed run: the best model in saveBest is the one to beat
};

/// Evaluates during a run and keeps its best model.
class TrainingEvaluator {
public:
  /// In a resumed run whose settings.saveBest holds an eval_results.json, its best score is
  /// the one to beat.
  TrainingEvaluator(TaskData data, EvalSettings settings);

  /// Whether to evaluate after optimizer step `step`: every `every` steps (or at the end of
  /// each epoch when `every` is 0), and after the last step.
  bool due(int64_t step, bool endsEpoch, bool lastStep) const;

  /// Evaluates after `step`, writes an "eval_" line to `log` (when not null), prints the
  /// scores, and when the main score is the best yet writes the model to settings.saveBest:
  /// a Hugging Face folder plus eval_results.json (and, for spans, predictions.json and
  /// nbest_predictions.json), assembled aside and renamed into place.
  void run(int64_t step, int64_t epoch, StepRunner &runner, uint64_t seed, PlanChecker *planCheck,
           MetricsLog *log, ProgressDisplay &progress);

private:
  void saveBest(int64_t step, const EvalOutcome &outcome, const TrainerPlan &plan,
                const std::byte *arena);

  TaskData data_;
  EvalSettings settings_;
  std::optional<double> best_; ///< the best main score so far
};

} // namespace bertc

// The evaluation loop (batches through the runner's eval step, logits cut per row, scored
// by task) and what a run does with it: when to evaluate, the log line, the screen line and
// the best model folder.
#include "evaluation.h"

#include "bertc/runtime/checkpoint.h"
#include "bertc/runtime/input_files.h"
#include "bertc/runtime/save_files.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

namespace bertc {
namespace {

namespace fs = std::filesystem;

/// Logits per row the eval step writes at most (see bertcEvalStep): none for a causal LM.
size_t logitsPerRow(const TrainSettings &train) {
  switch (train.task) {
  case TaskKind::CausalLM:
    return 0;
  case TaskKind::Span:
    return 2 * size_t(train.seqLen);
  case TaskKind::TokenClassification:
    return size_t(train.seqLen * train.numLabels);
  default:
    return size_t(train.numLabels);
  }
}

/// Row `r` of a micro-batch padded to `seq` tokens, cut to the row's `tokens` (RowLogits).
std::vector<float> rowLogits(const TrainSettings &train, const float *logits, int64_t r,
                             int64_t seq, size_t tokens) {
  switch (train.task) {
  case TaskKind::Span: {
    const float *starts = logits + 2 * r * seq, *ends = starts + seq;
    std::vector<float> row(starts, starts + tokens);
    row.insert(row.end(), ends, ends + tokens);
    return row;
  }
  case TaskKind::TokenClassification: {
    const float *first = logits + r * seq * train.numLabels;
    return std::vector<float>(first, first + tokens * size_t(train.numLabels));
  }
  case TaskKind::CausalLM:
    return {};
  default:
    return std::vector<float>(logits + r * train.numLabels, logits + (r + 1) * train.numLabels);
  }
}

/// Labelled tokens of rows [first, first + count) (the loss normalizer of per-token labels).
int64_t labelledTokens(const Dataset &data, size_t first, size_t count) {
  int64_t labelled = 0;
  for (size_t r = first; r < first + count; ++r)
    for (int32_t label : data.rows[r].tokenLabels)
      labelled += label != kIgnoredLabel;
  return labelled;
}

/// The class names of the model's config.json (id2label), by id; empty where it has none
/// for every class.
std::vector<std::string> labelNames(const TrainerPlan &plan) {
  nlohmann::json config = nlohmann::json::parse(plan.hfConfigJson ? plan.hfConfigJson : "", nullptr,
                                                /*allow_exceptions=*/false);
  if (!config.is_object() || !config.contains("id2label") || !config["id2label"].is_object())
    return {};
  const nlohmann::json &id2label = config["id2label"];
  std::vector<std::string> names;
  for (int64_t id = 0; id < plan.train.numLabels; ++id) {
    auto name = id2label.find(std::to_string(id));
    if (name == id2label.end() || !name->is_string())
      return {};
    names.push_back(name->get<std::string>());
  }
  return names;
}

EvalScores score(const TrainerPlan &plan, const RowLogits &logits, const TaskData &data,
                 double loss) {
  const TrainSettings &train = plan.train;
  switch (train.task) {
  case TaskKind::CausalLM:
    return scoreLanguageModel(loss);
  case TaskKind::Regression:
    return scoreRegression(logits, data.data);
  case TaskKind::Span:
    return scoreSpans(logits, data);
  case TaskKind::TokenClassification:
    return scoreTokenClassification(logits, data.data, train.numLabels, labelNames(plan));
  default:
    return scoreClassification(logits, data.data, train.numLabels);
  }
}

/// "loss 0.1234, accuracy 0.9375, f1 0.9412".
std::string describe(const EvalOutcome &outcome) {
  char text[64];
  std::snprintf(text, sizeof text, "loss %.4f", outcome.loss);
  std::string line = text;
  for (const auto &[name, value] : outcome.scores.values) {
    std::snprintf(text, sizeof text, ", %s %.4f", name.c_str(), value);
    line += text;
  }
  return line;
}

} // namespace

EvalOutcome evaluate(StepRunner &runner, const TaskData &data, int64_t step, uint64_t seed,
                     PlanChecker *planCheck) {
  const TrainSettings &train = runner.plan().train;
  Batcher batcher(data.data, train.microBatch, /*shuffle=*/false, seed);
  std::vector<float> logits(size_t(train.microBatch) * logitsPerRow(train));
  RowLogits rows;
  rows.reserve(data.data.rows.size());
  double lossSum = 0.0, lossItems = 0.0;
  for (int64_t b = 0; b < batcher.batchesPerEpoch(); ++b) {
    size_t first = rows.size();
    MicroBatch batch = batcher.next(runner.hostArena(), runner.plan().inputs);
    int64_t items = data.data.labels == LabelKind::TokenClass
                        ? labelledTokens(data.data, first, size_t(batch.rows))
                        : batch.rows;
    StepContext context{};
    context.batch = batch.rows;
    context.seq = batch.seq;
    context.lossNormalizer = float(std::max<int64_t>(items, 1));
    context.step = step;
    context.seed = seed;
    context.planCheck = planCheck;
    float batchLoss = runner.evalStep(context, logits.data());
    // The step's loss is its rows' sum over the normalizer: weight it back.
    lossSum += double(batchLoss) * double(context.lossNormalizer);
    lossItems += double(items);
    for (int64_t r = 0; r < batch.rows; ++r)
      rows.push_back(rowLogits(train, logits.data(), r, batch.seq,
                               data.data.rows[first + size_t(r)].inputIds.size()));
  }
  double loss = lossItems > 0 ? lossSum / lossItems : 0.0;
  return {score(runner.plan(), rows, data, loss), loss};
}

TrainingEvaluator::TrainingEvaluator(TaskData data, EvalSettings settings)
    : data_(std::move(data)), settings_(std::move(settings)) {
  if (settings_.saveBest.empty() || !settings_.resumed)
    return;
  // The previous best is only a bar to beat: without a readable one, any score beats it.
  recoverFolderSwap(namedPath(settings_.saveBest));
  std::string path = (fs::path(settings_.saveBest) / "eval_results.json").string();
  std::error_code ignored;
  if (!fs::is_regular_file(path, ignored))
    return;
  nlohmann::json results =
      parseJsonFile<CheckpointError>(readWholeFile<CheckpointError>(path, kStateFileLimit), path);
  if (results.is_object() && results.contains("metric") && results.contains("best") &&
      results["best"].is_number())
    best_ = results["best"].get<double>();
}

bool TrainingEvaluator::due(int64_t step, bool endsEpoch, bool lastStep) const {
  if (lastStep)
    return true;
  return settings_.every > 0 ? step % settings_.every == 0 : endsEpoch;
}

void TrainingEvaluator::run(int64_t step, int64_t epoch, StepRunner &runner, uint64_t seed,
                            PlanChecker *planCheck, MetricsLog *log, ProgressDisplay &progress) {
  EvalOutcome outcome = evaluate(runner, data_, step, seed, planCheck);
  if (log) {
    std::vector<std::pair<std::string, double>> values = {{"eval_loss", outcome.loss}};
    for (const auto &[name, value] : outcome.scores.values)
      values.push_back({"eval_" + name, value});
    log->appendEval(step, epoch, values);
  }
  progress.note("eval step " + std::to_string(step) + ": " + describe(outcome));
  if (settings_.saveBest.empty())
    return;
  double main = outcome.scores.values.front().second;
  bool better = !best_ || (outcome.scores.higherIsBetter ? main > *best_ : main < *best_);
  if (!better)
    return;
  best_ = main;
  runner.pullState();
  saveBest(step, outcome, runner.plan(), runner.hostArena());
  progress.note("best " + outcome.scores.values.front().first + " so far: saved " +
                settings_.saveBest);
}

/// The model folder, eval_results.json and the task's files (a span task's predictions),
/// swapped in as --save-best's folder.
void TrainingEvaluator::saveBest(int64_t step, const EvalOutcome &outcome, const TrainerPlan &plan,
                                 const std::byte *arena) {
  nlohmann::json results = {{"step", step},
                            {"metric", outcome.scores.values.front().first},
                            {"best", outcome.scores.values.front().second},
                            {"eval_loss", outcome.loss}};
  for (const auto &[metric, value] : outcome.scores.values)
    results["eval_" + metric] = value;
  replaceFolderAtomically(settings_.saveBest, [&](const std::string &partial) {
    writeModelFolder(partial, plan, arena, settings_.tokenizer, settings_.maxShardBytes);
    writeTextFileAtomically((fs::path(partial) / "eval_results.json").string(),
                            results.dump(2) + "\n");
    for (const auto &[name, text] : outcome.scores.files)
      writeTextFileAtomically((fs::path(partial) / name).string(), text);
  });
}

} // namespace bertc

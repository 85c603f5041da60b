// Scoring an evaluation by task. The metric definitions themselves live in eval_metrics.cpp;
// this file turns logits into predictions (argmax, best span) and collects the references.
#include "bertc/runtime/task_metrics.h"

#include "bertc/runtime/eval_metrics.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace bertc {
namespace {

int64_t argmax(const float *values, int64_t count) {
  return int64_t(std::max_element(values, values + count) - values);
}

void checkRows(const RowLogits &logits, const Dataset &data) {
  if (logits.size() != data.rows.size())
    throw std::invalid_argument("evaluation: " + std::to_string(logits.size()) +
                                " rows of logits for " + std::to_string(data.rows.size()) +
                                " rows of data");
}

} // namespace

EvalScores scoreClassification(const RowLogits &logits, const Dataset &data, int64_t numLabels) {
  checkRows(logits, data);
  std::vector<int64_t> predictions, labels;
  for (size_t r = 0; r < logits.size(); ++r) {
    predictions.push_back(argmax(logits[r].data(), numLabels));
    labels.push_back(data.rows[r].label);
  }
  EvalScores scores{{{"accuracy", accuracy(predictions, labels)}}, true};
  if (numLabels == 2)
    scores.values.push_back({"f1", binaryF1(predictions, labels)});
  return scores;
}

EvalScores scoreRegression(const RowLogits &logits, const Dataset &data) {
  checkRows(logits, data);
  std::vector<double> predictions, targets;
  for (size_t r = 0; r < logits.size(); ++r) {
    predictions.push_back(logits[r].front());
    targets.push_back(data.rows[r].target);
  }
  return {{{"mse", meanSquaredError(predictions, targets)},
           {"pearson", pearsonCorrelation(predictions, targets)}},
          false};
}

EvalScores scoreTokenClassification(const RowLogits &logits, const Dataset &data,
                                    int64_t numLabels) {
  checkRows(logits, data);
  std::vector<int64_t> predictions, labels;
  for (size_t r = 0; r < logits.size(); ++r) {
    const std::vector<int32_t> &tags = data.rows[r].tokenLabels;
    for (size_t t = 0; t < tags.size(); ++t) {
      if (tags[t] == kIgnoredLabel)
        continue;
      predictions.push_back(argmax(logits[r].data() + t * size_t(numLabels), numLabels));
      labels.push_back(tags[t]);
    }
  }
  if (labels.empty())
    throw std::invalid_argument("evaluation: no token of " + data.path + " carries a tag");
  return {{{"accuracy", accuracy(predictions, labels)}}, true};
}

std::optional<SpanChoice> bestSpan(const float *startLogits, const float *endLogits,
                                   const SquadFeature &feature, size_t maxAnswerTokens) {
  size_t first = feature.contextStart, end = first + feature.contextTokens();
  std::optional<SpanChoice> best;
  for (size_t start = first; start < end; ++start)
    for (size_t last = start; last < std::min(end, start + maxAnswerTokens); ++last) {
      double score = double(startLogits[start]) + double(endLogits[last]);
      if (!best || score > best->score)
        best = SpanChoice{start, last, score};
    }
  return best;
}

EvalScores scoreSpans(const RowLogits &logits, const TaskData &data) {
  checkRows(logits, data.data);
  const SquadDataset &squad = *data.squad;
  bool v2 = std::any_of(squad.examples.begin(), squad.examples.end(),
                        [](const SquadExample &example) { return example.isImpossible; });
  struct Answer {
    std::optional<SpanChoice> span;
    size_t feature = 0;
    double nullScore = std::numeric_limits<double>::infinity();
  };
  std::vector<Answer> answers(squad.examples.size());
  for (size_t f = 0; f < data.features.features.size(); ++f) {
    const SquadFeature &feature = data.features.features[f];
    size_t tokens = feature.inputIds.size();
    const float *starts = logits[f].data(), *ends = starts + tokens;
    Answer &answer = answers[feature.example];
    answer.nullScore = std::min(answer.nullScore, double(starts[0]) + double(ends[0]));
    std::optional<SpanChoice> span = bestSpan(starts, ends, feature);
    if (span && (!answer.span || span->score > answer.span->score)) {
      answer.span = span;
      answer.feature = f;
    }
  }
  SquadVersion version = v2 ? SquadVersion::V2_0 : SquadVersion::V1_1;
  std::vector<SquadScore> questions;
  for (size_t e = 0; e < squad.examples.size(); ++e) {
    const Answer &answer = answers[e];
    std::string prediction;
    if (answer.span && !(v2 && answer.nullScore > answer.span->score))
      prediction = std::string(*predictedAnswerText(squad, data.features, answer.feature,
                                                    answer.span->start, answer.span->end));
    std::vector<std::string> golds;
    for (const SquadAnswer &gold : squad.examples[e].answers)
      golds.push_back(gold.text);
    questions.push_back(squadQuestionScore(prediction, golds, version));
  }
  SquadScore totals = squadTotals(questions);
  return {{{"f1", totals.f1}, {"exact_match", totals.exactMatch}}, true};
}

} // namespace bertc

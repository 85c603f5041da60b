// Scoring an evaluation by task. The metric definitions themselves live in eval_metrics.cpp;
// this file turns logits into predictions (argmax; spans through squad_answers.h) and
// collects the references.
#include "bertc/runtime/task_metrics.h"

#include "bertc/runtime/entity_metrics.h"
#include "bertc/runtime/eval_metrics.h"
#include "bertc/runtime/squad_answers.h"

#include <algorithm>
#include <cmath>
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
  scores.values.push_back({"matthews_correlation", matthewsCorrelation(predictions, labels)});
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
           {"pearson", pearsonCorrelation(predictions, targets)},
           {"spearmanr", spearmanCorrelation(predictions, targets)}},
          false};
}

EvalScores scoreTokenClassification(const RowLogits &logits, const Dataset &data, int64_t numLabels,
                                    const std::vector<std::string> &names) {
  checkRows(logits, data);
  bool entities = int64_t(names.size()) == numLabels && areEntityTags(names);
  std::vector<int64_t> predictions, labels;
  // Each row's tagged words as a sentence of tag names, for the entity scores.
  std::vector<std::vector<std::string>> predictedTags, goldTags;
  for (size_t r = 0; r < logits.size(); ++r) {
    const std::vector<int32_t> &tags = data.rows[r].tokenLabels;
    predictedTags.emplace_back();
    goldTags.emplace_back();
    for (size_t t = 0; t < tags.size(); ++t) {
      if (tags[t] == kIgnoredLabel)
        continue;
      predictions.push_back(argmax(logits[r].data() + t * size_t(numLabels), numLabels));
      labels.push_back(tags[t]);
      if (entities) {
        predictedTags.back().push_back(names[size_t(predictions.back())]);
        goldTags.back().push_back(names[size_t(tags[t])]);
      }
    }
  }
  if (labels.empty())
    throw std::invalid_argument("evaluation: no token of " + data.path + " carries a tag");
  EvalScores scores{{{"accuracy", accuracy(predictions, labels)}}, true};
  if (entities) {
    EntityScores found = entityScores(predictedTags, goldTags);
    scores.values.push_back({"precision", found.precision});
    scores.values.push_back({"recall", found.recall});
    scores.values.push_back({"f1", found.f1});
  }
  return scores;
}

EvalScores scoreSpans(const RowLogits &logits, const TaskData &data) {
  checkRows(logits, data.data);
  const SquadDataset &squad = *data.squad;
  std::vector<QuestionPrediction> predictions =
      predictAnswers(logits, squad, data.features, data.squadOptions);
  bool v2 = std::any_of(squad.examples.begin(), squad.examples.end(),
                        [](const SquadExample &example) { return example.isImpossible; });
  SquadVersion version = v2 ? SquadVersion::V2_0 : SquadVersion::V1_1;
  std::vector<SquadScore> questions;
  for (size_t e = 0; e < squad.examples.size(); ++e) {
    std::vector<std::string> golds;
    for (const SquadAnswer &gold : squad.examples[e].answers)
      golds.push_back(gold.text);
    questions.push_back(squadQuestionScore(predictions[e].text, golds, version));
  }
  SquadScore totals = squadTotals(questions);
  return {{{"f1", totals.f1}, {"exact_match", totals.exactMatch}},
          true,
          {{"predictions.json", predictionsJson(squad, predictions)},
           {"nbest_predictions.json", nBestPredictionsJson(squad, predictions)}}};
}

EvalScores scoreLanguageModel(double loss) {
  // exp overflows to inf past a loss of about 709, as math.exp raises in run_clm.py.
  return {{{"perplexity", std::exp(loss)}}, false};
}

} // namespace bertc

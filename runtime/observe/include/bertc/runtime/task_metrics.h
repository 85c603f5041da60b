// The scores of an evaluation, by task, from the logits the eval step produced for each row:
// accuracy (and binary F1) for classification, MSE and Pearson for regression, token accuracy
// for token classification, and SQuAD exact match and F1 for spans, whose best start and end
// are mapped back to the context text. Pure functions over logits and data: no I/O.
#pragma once

#include "bertc/runtime/task_data.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bertc {

/// Named scores, the main one (which --save-best compares) first.
struct EvalScores {
  std::vector<std::pair<std::string, double>> values;
  bool higherIsBetter; ///< of the main score
  /// Files (name, contents) that go beside eval_results.json in the best model's folder.
  std::vector<std::pair<std::string, std::string>> files = {};
};

/// The eval step's logits of each row of a dataset, cut to the row's own tokens:
/// Classification [numLabels], Regression [1], Span [2 * tokens] (start logits, then end
/// logits), TokenClassification [tokens * numLabels].
using RowLogits = std::vector<std::vector<float>>;

/// "accuracy" (main), "f1" of class 1 when numLabels == 2, and "matthews_correlation", of
/// the argmax per row.
EvalScores scoreClassification(const RowLogits &logits, const Dataset &data, int64_t numLabels);

/// "mse" (main, lower is better), "pearson" and "spearmanr" of the predictions against the
/// targets.
EvalScores scoreRegression(const RowLogits &logits, const Dataset &data);

/// "accuracy" (main) of the argmax over the tokens that carry a label; where the classes'
/// `names` are entity tags (areEntityTags: "O", "B-PER", ...), also the entities'
/// "precision", "recall" and "f1", as seqeval gives them to run_ner.py.
EvalScores scoreTokenClassification(const RowLogits &logits, const Dataset &data, int64_t numLabels,
                                    const std::vector<std::string> &names = {});

/// "f1" (main) and "exact_match" in percent, as the official SQuAD scripts compute them, of
/// the predictions predictAnswers makes (squad_answers.h) with data.squadOptions; files
/// predictions.json and nbest_predictions.json.
EvalScores scoreSpans(const RowLogits &logits, const TaskData &data);

/// "perplexity" (main, lower is better) of a causal LM whose mean next-token loss over the
/// labelled tokens is `loss`: exp(loss), as run_clm.py reports it.
EvalScores scoreLanguageModel(double loss);

} // namespace bertc

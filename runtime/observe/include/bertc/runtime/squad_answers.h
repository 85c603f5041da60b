// Answers from a span head's logits as Hugging Face's run_qa.py post-processes them
// (utils_qa.py's postprocess_qa_predictions): in each window the n_best highest start
// logits paired with the n_best highest end logits, the valid pairs ranked by start + end
// logit over all windows of a question, the v2.0 "no answer" against the best of them, the
// n best with their probabilities. As in run_qa.py, a valid span whose start or end is not
// among its window's n_best logits is not considered.
#pragma once

#include "bertc/runtime/squad_data.h"

#include <string>
#include <vector>

namespace bertc {

/// A span of one window: token positions in the feature's inputs, its two logits and
/// their sum (the score answers are ranked by).
struct SpanChoice {
  size_t feature; ///< index into SquadFeatures::features
  size_t start;
  size_t end;
  float startLogit;
  float endLogit;
  double score;
};

/// The `count` best spans of features[featureIndex], best first, as run_qa.py finds them:
/// of the pairs of its `count` highest start logits and `count` highest end logits (over
/// all the window's tokens), those with start <= end, both among the window's context
/// tokens, at most `maxAnswerTokens` long. Ties rank the earlier start, then the earlier
/// end, first. Empty when no such pair exists.
std::vector<SpanChoice> bestSpans(const float *startLogits, const float *endLogits,
                                  const SquadFeatures &features, size_t featureIndex,
                                  size_t maxAnswerTokens, size_t count);

/// One entry of nbest_predictions.json.
struct RankedAnswer {
  std::string text; ///< the context's text from the start token to the end token
  float startLogit;
  float endLogit;
  double probability; ///< softmax of the scores over the question's entries
};

/// What the model answers to one question.
struct QuestionPrediction {
  std::string text;                ///< the prediction ("" for "no answer" on v2.0)
  std::vector<RankedAnswer> nBest; ///< best first
};

/// The prediction of every question of `squad` (in file order) from the start and end
/// logits of its features (`logits[f]`: the feature's start logits, then its end logits,
/// one per input token):
///  1. its options.nBest best spans over all its windows (bestSpans, at most
///     options.maxAnswerLength tokens); on v2.0 (a dataset with an impossible question)
///     also "no answer", scored by the smallest [CLS] start + end logit of its windows;
///  2. ranked by score, the first options.nBest kept, "no answer" appended on v2.0 when
///     it ranked lower; without any answer text, an entry "empty" with logits 0 first;
///  3. probabilities: the softmax of the kept scores;
///  4. the prediction: the best span's text, or "" on v2.0 when "no answer" scores more.
std::vector<QuestionPrediction> predictAnswers(const std::vector<std::vector<float>> &logits,
                                               const SquadDataset &squad,
                                               const SquadFeatures &features,
                                               const SquadOptions &options);

/// predictions.json ({"ID": "text", ...}) and nbest_predictions.json ({"ID": [{"start_logit",
/// "end_logit", "text", "probability"}, ...], ...}) as run_qa.py writes them, questions in
/// file order.
std::string predictionsJson(const SquadDataset &squad,
                            const std::vector<QuestionPrediction> &predictions);
std::string nBestPredictionsJson(const SquadDataset &squad,
                                 const std::vector<QuestionPrediction> &predictions);

} // namespace bertc

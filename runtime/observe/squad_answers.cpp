// run_qa.py's post-processing of span logits: the ranked spans of each question over its
// windows, the v2.0 null answer, probabilities and the two JSON files it writes.
#include "bertc/runtime/squad_answers.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace bertc {
namespace {

/// Whether `a` ranks before `b`: the higher score, then the earlier window, start and end.
bool ranksBefore(const SpanChoice &a, const SpanChoice &b) {
  if (a.score != b.score)
    return a.score > b.score;
  if (a.feature != b.feature)
    return a.feature < b.feature;
  return a.start != b.start ? a.start < b.start : a.end < b.end;
}

/// The `count` positions of the highest of `logits[0, tokens)`, highest first; of equal
/// logits the later position first (numpy's argsort of a short array, reversed).
std::vector<size_t> topPositions(const float *logits, size_t tokens, size_t count) {
  std::vector<size_t> positions(tokens);
  for (size_t i = 0; i < tokens; ++i)
    positions[i] = i;
  auto higher = [&](size_t a, size_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a > b;
  };
  size_t kept = std::min(count, tokens);
  std::partial_sort(positions.begin(), positions.begin() + std::ptrdiff_t(kept), positions.end(),
                    higher);
  positions.resize(kept);
  return positions;
}

/// An entry of a question's ranking before its probability is known.
struct Entry {
  std::string text;
  float startLogit;
  float endLogit;
  double score;
};

/// Steps 1 to 3 of predictAnswers for the features [first, last) of one question.
std::vector<Entry> rankAnswers(const std::vector<std::vector<float>> &logits,
                               const SquadDataset &squad, const SquadFeatures &features,
                               size_t first, size_t last, const SquadOptions &options, bool v2) {
  std::vector<SpanChoice> spans;
  std::vector<SpanChoice> nulls; // [CLS] of each window: the smallest is "no answer"
  for (size_t f = first; f < last; ++f) {
    size_t tokens = features.features[f].inputIds.size();
    const float *starts = logits[f].data(), *ends = starts + tokens;
    std::vector<SpanChoice> best =
        bestSpans(starts, ends, features, f, options.maxAnswerLength, options.nBest);
    spans.insert(spans.end(), best.begin(), best.end());
    nulls.push_back({f, 0, 0, starts[0], ends[0], double(starts[0]) + double(ends[0])});
  }
  std::sort(spans.begin(), spans.end(), ranksBefore);
  spans.resize(std::min(spans.size(), options.nBest));

  std::vector<Entry> entries;
  for (const SpanChoice &span : spans)
    entries.push_back(
        {std::string(*predictedAnswerText(squad, features, span.feature, span.start, span.end)),
         span.startLogit, span.endLogit, span.score});
  if (v2) {
    const SpanChoice &noAnswer = *std::min_element(
        nulls.begin(), nulls.end(), [](const auto &a, const auto &b) { return a.score < b.score; });
    // run_qa.py sorts "no answer" in after every span of an equal score, then keeps it
    // even when n_best spans outrank it.
    size_t at =
        size_t(std::find_if(entries.begin(), entries.end(),
                            [&](const Entry &entry) { return entry.score < noAnswer.score; }) -
               entries.begin());
    entries.insert(entries.begin() + std::ptrdiff_t(at),
                   {"", noAnswer.startLogit, noAnswer.endLogit, noAnswer.score});
    if (at < options.nBest && entries.size() > options.nBest)
      entries.pop_back();
  }
  if (entries.empty() || (entries.size() == 1 && entries.front().text.empty()))
    entries.insert(entries.begin(), {"empty", 0.0f, 0.0f, 0.0});
  return entries;
}

} // namespace

std::vector<SpanChoice> bestSpans(const float *startLogits, const float *endLogits,
                                  const SquadFeatures &features, size_t featureIndex,
                                  size_t maxAnswerTokens, size_t count) {
  const SquadFeature &feature = features.features[featureIndex];
  size_t first = feature.contextStart, end = first + feature.contextTokens();
  size_t tokens = feature.inputIds.size();
  auto inContext = [&](size_t position) { return position >= first && position < end; };
  // A bounded heap whose front is the worst span kept.
  std::vector<SpanChoice> kept;
  for (size_t start : topPositions(startLogits, tokens, count))
    for (size_t last : topPositions(endLogits, tokens, count)) {
      if (!inContext(start) || !inContext(last) || last < start || last - start >= maxAnswerTokens)
        continue;
      SpanChoice span{featureIndex,
                      start,
                      last,
                      startLogits[start],
                      endLogits[last],
                      double(startLogits[start]) + double(endLogits[last])};
      if (kept.size() < count) {
        kept.push_back(span);
        std::push_heap(kept.begin(), kept.end(), ranksBefore);
      } else if (count > 0 && ranksBefore(span, kept.front())) {
        std::pop_heap(kept.begin(), kept.end(), ranksBefore);
        kept.back() = span;
        std::push_heap(kept.begin(), kept.end(), ranksBefore);
      }
    }
  std::sort(kept.begin(), kept.end(), ranksBefore);
  return kept;
}

std::vector<QuestionPrediction> predictAnswers(const std::vector<std::vector<float>> &logits,
                                               const SquadDataset &squad,
                                               const SquadFeatures &features,
                                               const SquadOptions &options) {
  bool v2 = std::any_of(squad.examples.begin(), squad.examples.end(),
                        [](const SquadExample &example) { return example.isImpossible; });
  std::vector<QuestionPrediction> predictions(squad.examples.size());
  // Features come example by example (buildSquadFeatures): one run per question.
  for (size_t first = 0; first < features.features.size();) {
    size_t example = features.features[first].example, last = first;
    while (last < features.features.size() && features.features[last].example == example)
      ++last;
    std::vector<Entry> entries = rankAnswers(logits, squad, features, first, last, options, v2);
    first = last;

    double best = entries.front().score, sum = 0;
    for (const Entry &entry : entries)
      best = std::max(best, entry.score);
    for (const Entry &entry : entries)
      sum += std::exp(entry.score - best);
    QuestionPrediction &prediction = predictions[example];
    for (const Entry &entry : entries)
      prediction.nBest.push_back(
          {entry.text, entry.startLogit, entry.endLogit, std::exp(entry.score - best) / sum});
    if (!v2) {
      prediction.text = entries.front().text;
      continue;
    }
    const Entry &answer = *std::find_if(entries.begin(), entries.end(),
                                        [](const Entry &entry) { return !entry.text.empty(); });
    const Entry &null = *std::find_if(entries.begin(), entries.end(),
                                      [](const Entry &entry) { return entry.text.empty(); });
    bool noAnswer = null.score - (double(answer.startLogit) + double(answer.endLogit)) > 0;
    prediction.text = noAnswer ? "" : answer.text;
  }
  return predictions;
}

std::string predictionsJson(const SquadDataset &squad,
                            const std::vector<QuestionPrediction> &predictions) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (size_t e = 0; e < predictions.size(); ++e)
    json[squad.examples[e].id] = predictions[e].text;
  return json.dump(4) + "\n";
}

std::string nBestPredictionsJson(const SquadDataset &squad,
                                 const std::vector<QuestionPrediction> &predictions) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (size_t e = 0; e < predictions.size(); ++e) {
    nlohmann::ordered_json &ranked = json[squad.examples[e].id] = nlohmann::ordered_json::array();
    for (const RankedAnswer &answer : predictions[e].nBest)
      ranked.push_back({{"start_logit", answer.startLogit},
                        {"end_logit", answer.endLogit},
                        {"text", answer.text},
                        {"probability", answer.probability}});
  }
  return json.dump(4) + "\n";
}

} // namespace bertc

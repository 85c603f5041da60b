// Classification, regression and SQuAD metrics. The SQuAD part reproduces the official
// scripts' normalize_answer on UTF-8 text code point by code point, over the Unicode tables
// generated from Python (unicode_text.h: str.lower(), \w, str.isspace()).
#include "bertc/runtime/eval_metrics.h"

#include "bertc/runtime/unicode_text.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace bertc {
namespace {

/// Throws unless the two sides are non-empty and of the same length.
void checkPaired(const char *metric, size_t predictions, size_t references) {
  if (predictions != references)
    throw std::invalid_argument(std::string(metric) + ": " + std::to_string(predictions) +
                                " predictions but " + std::to_string(references) + " references");
  if (predictions == 0)
    throw std::invalid_argument(std::string(metric) + ": no predictions");
}

// --- SQuAD normalization ----------------------------------------------------------------

/// The code points of UTF-8 text; a byte that does not start a well-formed sequence
/// reads as U+FFFD.
std::u32string decodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t codePoint = 0xFFFD;
    size_t length = unicode::decodeUtf8At(text, i, codePoint);
    out.push_back(codePoint);
    i += std::max<size_t>(length, 1);
  }
  return out;
}

/// Python's string.punctuation.
bool isAsciiPunctuation(char32_t c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}

bool isSpace(char32_t c) { return (unicode::textProperties(c) & unicode::kSpaceChar) != 0; }
bool isWordChar(char32_t c) { return (unicode::textProperties(c) & unicode::kWordChar) != 0; }

/// The tokens of normalize_answer(text), i.e. normalize_answer(text).split(), in the
/// script's order:
///  1. lower-case the whole text as str.lower() does (full mappings, final sigma);
///  2. drop ASCII punctuation (string.punctuation; other punctuation stays);
///  3. replace every maximal run of word characters (Python's \w) that is "a", "an" or
///     "the" by a space: what \b(a|an|the)\b matches, \b on both sides making the match a
///     whole run;
///  4. split on whitespace (str.isspace()).
/// Lower-casing comes first because a sigma's final form depends on its neighbours,
/// punctuation included.
std::vector<std::string> answerTokens(std::string_view text) {
  std::u32string lowered;
  for (char32_t c : unicode::lowerText(decodeUtf8(text)))
    if (!isAsciiPunctuation(c))
      lowered += c;

  std::u32string spaced;
  for (size_t i = 0; i < lowered.size();) {
    size_t runEnd = i;
    while (runEnd < lowered.size() && isWordChar(lowered[runEnd]))
      ++runEnd;
    if (runEnd == i) {
      spaced += lowered[i++];
      continue;
    }
    std::u32string_view run(lowered.data() + i, runEnd - i);
    if (run == U"a" || run == U"an" || run == U"the")
      spaced += U' ';
    else
      spaced += run;
    i = runEnd;
  }

  std::vector<std::string> tokens;
  std::string token;
  for (char32_t c : spaced) {
    if (!isSpace(c)) {
      unicode::appendUtf8(c, token);
    } else if (!token.empty()) {
      tokens.push_back(std::move(token));
      token.clear();
    }
  }
  if (!token.empty())
    tokens.push_back(std::move(token));
  return tokens;
}

/// Token F1 of already normalized token lists (see squadF1).
double tokenF1(const std::vector<std::string> &prediction, const std::vector<std::string> &gold,
               SquadVersion version) {
  if (version == SquadVersion::V2_0 && (prediction.empty() || gold.empty()))
    return prediction.empty() && gold.empty() ? 1.0 : 0.0;
  std::unordered_map<std::string, int64_t> goldCounts;
  for (const std::string &token : gold)
    ++goldCounts[token];
  int64_t common = 0;
  for (const std::string &token : prediction) {
    auto found = goldCounts.find(token);
    if (found != goldCounts.end() && found->second > 0) {
      --found->second;
      ++common;
    }
  }
  if (common == 0)
    return 0.0;
  double precision = double(common) / double(prediction.size());
  double recall = double(common) / double(gold.size());
  return 2 * precision * recall / (precision + recall);
}

} // namespace

double accuracy(const std::vector<int64_t> &predictions, const std::vector<int64_t> &labels) {
  checkPaired("accuracy", predictions.size(), labels.size());
  size_t correct = 0;
  for (size_t i = 0; i < predictions.size(); ++i)
    correct += predictions[i] == labels[i];
  return double(correct) / double(predictions.size());
}

double binaryF1(const std::vector<int64_t> &predictions, const std::vector<int64_t> &labels) {
  checkPaired("binaryF1", predictions.size(), labels.size());
  int64_t truePositives = 0, falsePositives = 0, falseNegatives = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    int64_t predicted = predictions[i], actual = labels[i];
    if ((predicted != 0 && predicted != 1) || (actual != 0 && actual != 1))
      throw std::invalid_argument("binaryF1: pair " + std::to_string(i) + " is (" +
                                  std::to_string(predicted) + ", " + std::to_string(actual) +
                                  "); binary classes are 0 and 1");
    truePositives += predicted == 1 && actual == 1;
    falsePositives += predicted == 1 && actual == 0;
    falseNegatives += predicted == 0 && actual == 1;
  }
  int64_t denominator = 2 * truePositives + falsePositives + falseNegatives;
  return denominator == 0 ? 0.0 : double(2 * truePositives) / double(denominator);
}

double matthewsCorrelation(const std::vector<int64_t> &predictions,
                           const std::vector<int64_t> &labels) {
  checkPaired("matthewsCorrelation", predictions.size(), labels.size());
  std::unordered_map<int64_t, double> predictedCounts, trueCounts;
  double correct = 0, total = double(predictions.size());
  for (size_t i = 0; i < predictions.size(); ++i) {
    predictedCounts[predictions[i]] += 1;
    trueCounts[labels[i]] += 1;
    correct += predictions[i] == labels[i];
  }
  double crossCounts = 0, predictedSquares = 0, trueSquares = 0;
  for (const auto &[label, count] : trueCounts) {
    trueSquares += count * count;
    auto predicted = predictedCounts.find(label);
    crossCounts += predicted == predictedCounts.end() ? 0.0 : predicted->second * count;
  }
  for (const auto &[label, count] : predictedCounts)
    predictedSquares += count * count;
  double denominator =
      std::sqrt((total * total - predictedSquares) * (total * total - trueSquares));
  if (denominator == 0)
    return 0.0;
  return std::clamp((correct * total - crossCounts) / denominator, -1.0, 1.0);
}

double meanSquaredError(const std::vector<double> &predictions,
                        const std::vector<double> &targets) {
  checkPaired("meanSquaredError", predictions.size(), targets.size());
  double sum = 0;
  for (size_t i = 0; i < predictions.size(); ++i)
    sum += (predictions[i] - targets[i]) * (predictions[i] - targets[i]);
  return sum / double(predictions.size());
}

/// Two passes: the means, then the centred cross and square sums, which avoids the
/// cancellation of the one-pass Σxy − n·x̄·ȳ form.
double pearsonCorrelation(const std::vector<double> &predictions,
                          const std::vector<double> &targets) {
  checkPaired("pearsonCorrelation", predictions.size(), targets.size());
  double n = double(predictions.size());
  double meanX = 0, meanY = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    meanX += predictions[i] / n;
    meanY += targets[i] / n;
  }
  double crossSum = 0, squaresX = 0, squaresY = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    double dx = predictions[i] - meanX, dy = targets[i] - meanY;
    crossSum += dx * dy;
    squaresX += dx * dx;
    squaresY += dy * dy;
  }
  if (squaresX == 0 || squaresY == 0)
    return 0.0;
  return std::clamp(crossSum / std::sqrt(squaresX * squaresY), -1.0, 1.0);
}

namespace {

/// 1-based ranks of `values`, ties sharing the mean of their ranks (scipy's rankdata).
std::vector<double> averageRanks(const std::vector<double> &values) {
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t first = 0; first < order.size();) {
    size_t last = first;
    while (last + 1 < order.size() && values[order[last + 1]] == values[order[first]])
      ++last;
    double rank = double(first + last) / 2.0 + 1.0;
    for (size_t k = first; k <= last; ++k)
      ranks[order[k]] = rank;
    first = last + 1;
  }
  return ranks;
}

} // namespace

double spearmanCorrelation(const std::vector<double> &predictions,
                           const std::vector<double> &targets) {
  checkPaired("spearmanCorrelation", predictions.size(), targets.size());
  // Ranks would hide a NaN (a diverged run's predictions): it propagates, as in scipy.
  auto finite = [](double value) { return std::isfinite(value); };
  if (!std::all_of(predictions.begin(), predictions.end(), finite) ||
      !std::all_of(targets.begin(), targets.end(), finite))
    return std::numeric_limits<double>::quiet_NaN();
  return pearsonCorrelation(averageRanks(predictions), averageRanks(targets));
}

std::string normalizeAnswer(std::string_view text) {
  std::string joined;
  for (const std::string &token : answerTokens(text))
    joined += (joined.empty() ? "" : " ") + token;
  return joined;
}

/// Equal token lists are equal normalized texts: tokens hold no whitespace.
double squadExactMatch(std::string_view prediction, std::string_view gold) {
  return answerTokens(prediction) == answerTokens(gold) ? 1.0 : 0.0;
}

double squadF1(std::string_view prediction, std::string_view gold, SquadVersion version) {
  return tokenF1(answerTokens(prediction), answerTokens(gold), version);
}

SquadScore squadQuestionScore(std::string_view prediction, const std::vector<std::string> &golds,
                              SquadVersion version) {
  std::vector<std::vector<std::string>> goldTokens;
  for (const std::string &gold : golds) {
    std::vector<std::string> tokens = answerTokens(gold);
    if (version == SquadVersion::V1_1 || !tokens.empty())
      goldTokens.push_back(std::move(tokens));
  }
  if (goldTokens.empty() && version == SquadVersion::V1_1)
    throw std::invalid_argument("squadQuestionScore: SQuAD v1.1 needs a gold answer");
  if (goldTokens.empty())
    goldTokens.emplace_back(); // the gold answer "", which has no tokens
  std::vector<std::string> predicted = answerTokens(prediction);
  SquadScore best{0.0, 0.0};
  for (const std::vector<std::string> &gold : goldTokens) {
    best.exactMatch = std::max(best.exactMatch, predicted == gold ? 1.0 : 0.0);
    best.f1 = std::max(best.f1, tokenF1(predicted, gold, version));
  }
  return best;
}

SquadScore squadTotals(const std::vector<SquadScore> &questions) {
  if (questions.empty())
    throw std::invalid_argument("squadTotals: no questions");
  SquadScore total{0.0, 0.0};
  for (const SquadScore &question : questions) {
    total.exactMatch += question.exactMatch;
    total.f1 += question.f1;
  }
  double scale = 100.0 / double(questions.size());
  return {total.exactMatch * scale, total.f1 * scale};
}

} // namespace bertc

// Evaluation metrics of the trainer: accuracy and binary F1 for classification, mean squared
// error and Pearson correlation for regression, and SQuAD's exact match and token F1 as the
// official v1.1 and v2.0 scripts compute them. Pure functions over predictions and
// references: no I/O. A caller's misuse (lengths that differ, no predictions) throws
// std::invalid_argument.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bertc {

/// Fraction of predictions equal to their label, in [0, 1].
double accuracy(const std::vector<int64_t> &predictions, const std::vector<int64_t> &labels);

/// F1 of class 1 (positive) against class 0, every value being 0 or 1:
/// 2·TP / (2·TP + FP + FN), which equals 2·P·R / (P + R). With no positive anywhere
/// (TP + FP + FN = 0) precision and recall are undefined and F1 is defined as 0, as
/// scikit-learn's f1_score does by default (zero_division).
double binaryF1(const std::vector<int64_t> &predictions, const std::vector<int64_t> &labels);

/// Matthews' correlation coefficient of two class lists (GLUE's CoLA metric), for any number
/// of classes as scikit-learn's matthews_corrcoef: with the confusion matrix's trace c, total
/// s, true counts t_k and predicted counts p_k, (c·s − Σ p_k·t_k) /
/// √((s² − Σ p_k²)(s² − Σ t_k²)), in [−1, 1]; 0 where the denominator is 0 (one side
/// constant).
double matthewsCorrelation(const std::vector<int64_t> &predictions,
                           const std::vector<int64_t> &labels);

/// Mean of (prediction − target)².
double meanSquaredError(const std::vector<double> &predictions, const std::vector<double> &targets);

/// Pearson's correlation coefficient, in [−1, 1]. It is undefined when either side is
/// constant (zero variance, which includes a single pair); defined as 0 there.
double pearsonCorrelation(const std::vector<double> &predictions,
                          const std::vector<double> &targets);

/// Spearman's rank correlation (GLUE's STS-B metric beside Pearson's), as scipy's spearmanr:
/// Pearson's correlation of the ranks, tied values taking the mean of their ranks; NaN
/// where a value is not finite.
double spearmanCorrelation(const std::vector<double> &predictions,
                           const std::vector<double> &targets);

/// SQuAD's normalize_answer: lower-case (str.lower()), remove ASCII punctuation (Python's
/// string.punctuation), replace the words "a", "an" and "the" by a space (regex
/// \b(a|an|the)\b), then split on whitespace and join with single spaces. Text is UTF-8,
/// handled by code point as Python 3 handles str, for all of Unicode (at the version of
/// unicode_tables.inc): full lower-case mappings with the final sigma (İ gives i + U+0307,
/// "ΟΔΟΣ" gives "οδος"), word characters as Python's \w (str.isalnum() or '_'), whitespace
/// as str.split()'s. Invalid UTF-8 bytes read as U+FFFD.
std::string normalizeAnswer(std::string_view text);

/// Which official script's rules apply. They differ only where an answer normalizes to
/// nothing: v2.0 treats that as "no answer" (see squadF1 and squadQuestionScore).
enum class SquadVersion { V1_1, V2_0 };

/// 1 when the two answers normalize to the same text, else 0 (both versions).
double squadExactMatch(std::string_view prediction, std::string_view gold);

/// Token F1 of the normalized answers: the tokens in common, counted as a multiset
/// (min of the two counts per token), give precision = common / |prediction| and
/// recall = common / |gold|; F1 = 2·P·R / (P + R), and 0 when nothing is in common.
/// V2_0: when either side has no tokens, 1 if both have none (a correct "no answer"),
/// else 0. V1_1: no tokens in common is 0 even when both are empty.
double squadF1(std::string_view prediction, std::string_view gold, SquadVersion version);

/// Scores of one question (0/1 exact match, F1 in [0, 1]) or of a dataset (percentages).
struct SquadScore {
  double exactMatch;
  double f1;
};

/// Exact match and F1 of one question: each the maximum over its gold answers (taken
/// separately, as the scripts do). V1_1 scores against every gold answer and needs at
/// least one. V2_0 drops gold answers that normalize to nothing; a question left with none
/// (an unanswerable question has an empty list) is scored against the single gold answer
/// "", so that only an empty prediction scores (1, 1).
SquadScore squadQuestionScore(std::string_view prediction, const std::vector<std::string> &golds,
                              SquadVersion version);

/// The dataset totals the scripts print: 100 × the mean over questions of each score.
SquadScore squadTotals(const std::vector<SquadScore> &questions);

} // namespace bertc

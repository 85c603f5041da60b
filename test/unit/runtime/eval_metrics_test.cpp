// Evaluation metrics against hand-computed values, the arithmetic written beside each
// expectation: accuracy, binary F1 from confusion-matrix counts, Matthews' correlation, MSE,
// Pearson and Spearman, and SQuAD's normalization, exact match, token F1, gold-answer
// maxima and totals (v1.1, v2.0).
#include "bertc/runtime/eval_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace bertc {
namespace {

using Labels = std::vector<int64_t>;
using Values = std::vector<double>;
using Answers = std::vector<std::string>;

/// Prediction and label lists holding the given confusion-matrix counts.
struct Confusion {
  Labels predictions, labels;

  Confusion(int truePositives, int falsePositives, int falseNegatives, int trueNegatives) {
    add(truePositives, 1, 1);
    add(falsePositives, 1, 0);
    add(falseNegatives, 0, 1);
    add(trueNegatives, 0, 0);
  }

private:
  void add(int count, int64_t predicted, int64_t actual) {
    predictions.insert(predictions.end(), size_t(count), predicted);
    labels.insert(labels.end(), size_t(count), actual);
  }
};

double f1Of(const Confusion &counts) { return binaryF1(counts.predictions, counts.labels); }

TEST(MetricClassification, AccuracyCountsExactMatches) {
  // Equal at positions 0, 1 and 3: 3 / 5.
  EXPECT_DOUBLE_EQ(accuracy({1, 0, 2, 2, 1}, {1, 0, 1, 2, 0}), 0.6);
  EXPECT_DOUBLE_EQ(accuracy({4}, {4}), 1.0);
  EXPECT_DOUBLE_EQ(accuracy({0, 0}, {1, 1}), 0.0);
}

TEST(MetricClassification, BinaryF1FromConfusionCounts) {
  // TP 3, FP 1, FN 2: P = 3/4, R = 3/5, F1 = 2·3 / (2·3 + 1 + 2) = 6/9.
  EXPECT_DOUBLE_EQ(f1Of(Confusion(3, 1, 2, 4)), 6.0 / 9.0);
  // Every prediction right: 2·2 / (2·2 + 0 + 0) = 1.
  EXPECT_DOUBLE_EQ(f1Of(Confusion(2, 0, 0, 2)), 1.0);
  // All predicted positive, one positive of four: 2·1 / (2·1 + 3 + 0) = 0.4.
  EXPECT_DOUBLE_EQ(f1Of(Confusion(1, 3, 0, 0)), 0.4);
  // All predicted negative: TP 0, FN 2: 0 / (0 + 0 + 2) = 0.
  EXPECT_DOUBLE_EQ(f1Of(Confusion(0, 0, 2, 3)), 0.0);
  // No true positive but both errors: 0 / (0 + 2 + 1) = 0.
  EXPECT_DOUBLE_EQ(f1Of(Confusion(0, 2, 1, 1)), 0.0);
  // True negatives do not count: TP 1, FP 1, FN 0, any TN: 2 / (2 + 1) = 2/3.
  EXPECT_DOUBLE_EQ(f1Of(Confusion(1, 1, 0, 0)), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(f1Of(Confusion(1, 1, 0, 50)), 2.0 / 3.0);
}

TEST(MetricClassification, BinaryF1WithNoPositiveAnywhereIsZero) {
  // TP + FP + FN = 0: precision and recall are 0/0; defined as 0, even though every
  // prediction is right.
  EXPECT_DOUBLE_EQ(f1Of(Confusion(0, 0, 0, 4)), 0.0);
}

TEST(MetricClassification, BinaryF1RejectsOtherClasses) {
  EXPECT_THROW(binaryF1({0, 2}, {0, 1}), std::invalid_argument);
  EXPECT_THROW(binaryF1({0, 1}, {-1, 1}), std::invalid_argument);
}

TEST(MetricClassification, MatthewsCorrelationAsScikitLearn) {
  // Binary, TP 3, FP 1, FN 2, TN 4: (TP·TN − FP·FN) / √((TP+FP)(TP+FN)(TN+FP)(TN+FN))
  // = (12 − 2) / √(4·5·5·6) = 10 / √600.
  Confusion binary(3, 1, 2, 4);
  EXPECT_NEAR(matthewsCorrelation(binary.predictions, binary.labels), 10.0 / std::sqrt(600.0),
              1e-12);
  // Three classes: correct c = 3 of s = 6; true counts 2, 2, 2, predicted 3, 1, 2:
  // (3·6 − (3·2 + 1·2 + 2·2)) / √((36 − (9 + 1 + 4))(36 − 12)) = 6 / √528.
  EXPECT_NEAR(matthewsCorrelation({0, 2, 1, 0, 0, 2}, {0, 1, 2, 0, 1, 2}), 6.0 / std::sqrt(528.0),
              1e-12);
  EXPECT_DOUBLE_EQ(matthewsCorrelation({1, 0, 1, 0}, {0, 1, 0, 1}), -1.0);
  EXPECT_DOUBLE_EQ(matthewsCorrelation({2, 0, 1}, {2, 0, 1}), 1.0);
  // One class predicted throughout: the denominator is 0, and so is the coefficient.
  EXPECT_DOUBLE_EQ(matthewsCorrelation({1, 1, 1}, {0, 1, 0}), 0.0);
}

TEST(MetricRegression, MeanSquaredError) {
  // Differences −0.5, 0, 2; squares 0.25, 0, 4; mean 4.25 / 3.
  EXPECT_DOUBLE_EQ(meanSquaredError({1, 2, 3}, {1.5, 2, 1}), 4.25 / 3.0);
  EXPECT_DOUBLE_EQ(meanSquaredError({7}, {7}), 0.0);
}

TEST(MetricRegression, PearsonOnASmallSet) {
  // x = 1, 2, 3, 4 (mean 2.5), y = 2, 4, 5, 9 (mean 5).
  // dx = −1.5, −0.5, 0.5, 1.5; dy = −3, −1, 0, 4.
  // Σdx·dy = 4.5 + 0.5 + 0 + 6 = 11; Σdx² = 5; Σdy² = 9 + 1 + 0 + 16 = 26.
  // r = 11 / √(5·26) = 11 / √130 ≈ 0.96476.
  EXPECT_NEAR(pearsonCorrelation({1, 2, 3, 4}, {2, 4, 5, 9}), 11.0 / std::sqrt(130.0), 1e-12);
  // y = 2x + 1 exactly: 1; y = −3x: −1.
  EXPECT_DOUBLE_EQ(pearsonCorrelation({0.5, 1.5, 4}, {2, 4, 9}), 1.0);
  EXPECT_DOUBLE_EQ(pearsonCorrelation({1, 2, 3}, {-3, -6, -9}), -1.0);
  // dx = −1, 0, 1; dy = 1, −2, 1: Σdx·dy = −1 + 0 + 1 = 0.
  EXPECT_NEAR(pearsonCorrelation({1, 2, 3}, {1, -2, 1}), 0.0, 1e-15);
}

TEST(MetricRegression, PearsonOfAConstantSideIsZero) {
  // Σdx² = 0: r = Σdx·dy / 0 is undefined; defined as 0.
  EXPECT_DOUBLE_EQ(pearsonCorrelation({2, 2, 2}, {1, 2, 3}), 0.0);
  EXPECT_DOUBLE_EQ(pearsonCorrelation({1, 2, 3}, {5, 5, 5}), 0.0);
  EXPECT_DOUBLE_EQ(pearsonCorrelation({1}, {1}), 0.0);
}

TEST(MetricRegression, SpearmanIsPearsonOfTheRanks) {
  // Ranks 1 2 3 4 against 1 3 2 4: Σd² = 2, ρ = 1 − 6·2 / (4·15) = 0.8.
  EXPECT_NEAR(spearmanCorrelation({1, 2, 3, 4}, {10, 30, 20, 40}), 0.8, 1e-12);
  // Monotone but not linear: 1.
  EXPECT_DOUBLE_EQ(spearmanCorrelation({1, 2, 3}, {1, 8, 27}), 1.0);
  // Ties share their mean rank: x ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4;
  // Σdx·dy = 2.25 + 2.25, Σdx² = 4.5, Σdy² = 5: 4.5 / √(4.5·5).
  EXPECT_NEAR(spearmanCorrelation({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  // A diverged run's NaN predictions have no ranks: NaN, not a perfect 1.
  const double nan = std::nan("");
  EXPECT_TRUE(std::isnan(spearmanCorrelation({nan, nan, nan}, {1, 2, 3})));
  EXPECT_TRUE(std::isnan(spearmanCorrelation({1, nan, 3}, {1, 2, 3})));
}

TEST(EvalMetrics, MisuseThrows) {
  EXPECT_THROW(accuracy({1, 0}, {1}), std::invalid_argument);
  EXPECT_THROW(accuracy({}, {}), std::invalid_argument);
  EXPECT_THROW(binaryF1({}, {}), std::invalid_argument);
  EXPECT_THROW(meanSquaredError({1}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(pearsonCorrelation({}, {}), std::invalid_argument);
  EXPECT_THROW(squadTotals({}), std::invalid_argument);
  EXPECT_THROW(squadQuestionScore("x", {}, SquadVersion::V1_1), std::invalid_argument);
}

TEST(SquadMetrics, NormalizeAnswerAsTheOfficialScript) {
  // lower → "the cat's hat!"; punctuation → "the cats hat"; articles → " cats hat".
  EXPECT_EQ(normalizeAnswer("The Cat's hat!"), "cats hat");
  EXPECT_EQ(normalizeAnswer("Hello, World."), "hello world");
  EXPECT_EQ(normalizeAnswer("an apple a day"), "apple day");
  EXPECT_EQ(normalizeAnswer("  spaced   out  "), "spaced out");
  // Articles only as whole words.
  EXPECT_EQ(normalizeAnswer("theater and anthem"), "theater and anthem");
  // Punctuation goes before articles: "the-cat" → "thecat", "a.b.c" → "abc"; "_" is
  // punctuation too.
  EXPECT_EQ(normalizeAnswer("the-cat"), "thecat");
  EXPECT_EQ(normalizeAnswer("a.b.c"), "abc");
  EXPECT_EQ(normalizeAnswer("the_end"), "theend");
  EXPECT_EQ(normalizeAnswer("The"), "");
  EXPECT_EQ(normalizeAnswer(""), "");
}

TEST(SquadMetrics, NormalizeAnswerHandlesUnicodeAsPythonDoes) {
  // No-break space and thin space split words, as Python's str.split() does.
  EXPECT_EQ(normalizeAnswer("A\u00a0cat\u2009sat"), "cat sat");
  // Curly quotes are neither punctuation (string.punctuation is ASCII) nor word characters,
  // so "the" between them is a whole word: "“the” cat" → "“ ” cat".
  EXPECT_EQ(normalizeAnswer("\u201cThe\u201d cat"), "\u201c \u201d cat");
  // Latin-1 and Latin Extended-A lower-case; İ lowers to i + U+0307 (a full mapping).
  EXPECT_EQ(normalizeAnswer("\u00dcber \u00c9COLE \u0141\u00d3D\u0179"),
            "\u00fcber \u00e9cole \u0142\u00f3d\u017a");
  EXPECT_EQ(normalizeAnswer("\u0130stanbul"), "i\u0307stanbul");
  // A letter next to "the" makes it part of a longer word: nothing removed.
  EXPECT_EQ(normalizeAnswer("the\u00e9 cat"), "the\u00e9 cat");
  // Invalid UTF-8 reads as U+FFFD.
  EXPECT_EQ(normalizeAnswer("x\xff"), "x\ufffd");
}

// Beyond Latin, as Python 3.11's str.lower(), \w and str.split() make them (each worked
// from the Unicode data: category, case mapping, Case_Ignorable).
TEST(SquadMetrics, NormalizeAnswerCoversAllOfUnicode) {
  // Cyrillic, Vietnamese (Latin Extended Additional), titlecase ǅ and the Roman numeral Ⅻ
  // (Nl, a word character) lower-case; "THE" before the numeral is a whole word.
  EXPECT_EQ(normalizeAnswer("МОСКВА"),
            "москва");                              // МОСКВА -> москва
  EXPECT_EQ(normalizeAnswer("ĐẠI HỌC"), "đại học"); // ĐẠI HỌC
  EXPECT_EQ(normalizeAnswer("ǅ"), "ǆ");             // ǅ -> ǆ
  EXPECT_EQ(normalizeAnswer("THE Ⅻ"), "ⅻ");         // Ⅻ -> ⅻ
  // A capital sigma is final (ς) after a cased letter when no cased letter follows, the
  // case-ignorable ("." and "'") skipped: ΟΔΟΣ -> οδος, ΣΑΣ -> σας (the first has nothing
  // before it), ΑΣ.Β -> ασβ (Β follows across "."), ΑΣ' -> ας.
  EXPECT_EQ(normalizeAnswer("ΟΔΟΣ"), "οδος");
  EXPECT_EQ(normalizeAnswer("ΣΑΣ"), "σας");
  EXPECT_EQ(normalizeAnswer("ΑΣ.Β"), "ασβ");
  EXPECT_EQ(normalizeAnswer("ΑΣ'"), "ας");
  // Lower-casing comes before the punctuation goes: in ΑΣ-Β the "-" (not case-ignorable)
  // ends the word, so Σ is final; removing "-" first would have made it σ.
  EXPECT_EQ(normalizeAnswer("ΑΣ-Β"), "αςβ");
  // Non-ASCII punctuation and marks stay, and are not word characters: the Arabic comma
  // (Po), the Greek question mark (Po) and the combining titlo (Mn) each end an article.
  EXPECT_EQ(normalizeAnswer("the،cat"), "،cat");
  EXPECT_EQ(normalizeAnswer("a;"), ";");
  EXPECT_EQ(normalizeAnswer("the҃"), "҃");
  // A digit of another script (Nd) is a word character: "a٣" is no article.
  EXPECT_EQ(normalizeAnswer("a٣"), "a٣");
  // The ogham space mark (Zs) separates words.
  EXPECT_EQ(normalizeAnswer("the cat"), "cat");
}

TEST(SquadMetrics, ExactMatchComparesNormalizedText) {
  EXPECT_EQ(squadExactMatch("The Beatles", "beatles"), 1.0);   // "beatles" both
  EXPECT_EQ(squadExactMatch("Beatles!", "the  beatles"), 1.0); // "beatles" both
  EXPECT_EQ(squadExactMatch("Beatle", "Beatles"), 0.0);
  EXPECT_EQ(squadExactMatch("a", "the"), 1.0); // "" both
}

TEST(SquadMetrics, TokenF1) {
  for (SquadVersion version : {SquadVersion::V1_1, SquadVersion::V2_0}) {
    // [cat, sat] vs [cat, sat, down]: common 2; P = 2/2, R = 2/3;
    // F1 = 2·1·(2/3) / (1 + 2/3) = (4/3) / (5/3) = 0.8.
    EXPECT_DOUBLE_EQ(squadF1("the cat sat", "a cat sat down", version), 0.8);
    // Same tokens after normalization: 1.
    EXPECT_DOUBLE_EQ(squadF1("The cat, sat.", "cat sat", version), 1.0);
    // Nothing in common: 0.
    EXPECT_DOUBLE_EQ(squadF1("dog", "cat", version), 0.0);
    // Multiset: [cat, cat, cat] vs [cat, dog]: common min(3, 1) = 1; P = 1/3, R = 1/2;
    // F1 = 2·(1/6) / (5/6) = 0.4.
    EXPECT_DOUBLE_EQ(squadF1("cat cat cat", "cat dog", version), 0.4);
    // [cat, cat] vs [cat, cat, dog]: common 2; P = 1, R = 2/3: F1 = 0.8.
    EXPECT_DOUBLE_EQ(squadF1("cat cat", "cat cat dog", version), 0.8);
    // Order does not matter: [sat, cat] vs [cat, sat].
    EXPECT_DOUBLE_EQ(squadF1("sat cat", "cat sat", version), 1.0);
    // One side empty: 0.
    EXPECT_DOUBLE_EQ(squadF1("", "cat", version), 0.0);
    EXPECT_DOUBLE_EQ(squadF1("cat", "The", version), 0.0);
  }
  // Both empty: v2.0 counts an agreed "no answer" as 1; v1.1 has no common token: 0.
  EXPECT_DOUBLE_EQ(squadF1("", "", SquadVersion::V2_0), 1.0);
  EXPECT_DOUBLE_EQ(squadF1("an", "the", SquadVersion::V2_0), 1.0);
  EXPECT_DOUBLE_EQ(squadF1("", "", SquadVersion::V1_1), 0.0);
}

TEST(SquadMetrics, QuestionScoreIsTheMaximumOverGoldAnswers) {
  for (SquadVersion version : {SquadVersion::V1_1, SquadVersion::V2_0}) {
    // "denver broncos" equals the second gold answer once normalized: EM 1, F1 1.
    SquadScore exact =
        squadQuestionScore("Denver Broncos", {"Broncos", "the Denver Broncos", "Denver"}, version);
    EXPECT_EQ(exact.exactMatch, 1.0);
    EXPECT_DOUBLE_EQ(exact.f1, 1.0);
    // [in, 1990] vs [1990]: P = 1/2, R = 1: F1 = 2/3.
    // [in, 1990] vs [year, 1990]: P = 1/2, R = 1/2: F1 = 1/2. Max 2/3; no exact match.
    SquadScore partial = squadQuestionScore("in 1990", {"the year 1990", "1990"}, version);
    EXPECT_EQ(partial.exactMatch, 0.0);
    EXPECT_DOUBLE_EQ(partial.f1, 2.0 / 3.0);
  }
}

TEST(SquadMetrics, V2UnanswerableQuestions) {
  // No gold answer: only an empty prediction is right.
  SquadScore abstained = squadQuestionScore("", {}, SquadVersion::V2_0);
  EXPECT_EQ(abstained.exactMatch, 1.0);
  EXPECT_EQ(abstained.f1, 1.0);
  SquadScore answered = squadQuestionScore("Denver", {}, SquadVersion::V2_0);
  EXPECT_EQ(answered.exactMatch, 0.0);
  EXPECT_EQ(answered.f1, 0.0);
  // A gold answer that normalizes to nothing is dropped; none left: unanswerable, and a
  // prediction that normalizes to nothing ("a") abstains.
  SquadScore articleOnly = squadQuestionScore("a", {"The"}, SquadVersion::V2_0);
  EXPECT_EQ(articleOnly.exactMatch, 1.0);
  EXPECT_EQ(articleOnly.f1, 1.0);
  // An empty gold beside a real one is dropped: "" no longer matches anything.
  SquadScore mixed = squadQuestionScore("", {"", "Denver"}, SquadVersion::V2_0);
  EXPECT_EQ(mixed.exactMatch, 0.0);
  EXPECT_EQ(mixed.f1, 0.0);
}

TEST(SquadMetrics, V1KeepsEveryGoldAnswer) {
  // v1.1 scores against "The" itself: both normalize to "" (EM 1), but with no tokens in
  // common its F1 is 0.
  SquadScore articleOnly = squadQuestionScore("a", {"The"}, SquadVersion::V1_1);
  EXPECT_EQ(articleOnly.exactMatch, 1.0);
  EXPECT_EQ(articleOnly.f1, 0.0);
}

TEST(SquadMetrics, TotalsArePercentagesOfTheMeans) {
  // EM: 100 · (1 + 0 + 0 + 1) / 4 = 50; F1: 100 · (1 + 0.8 + 0.4 + 1) / 4 = 80.
  SquadScore total = squadTotals({{1, 1}, {0, 0.8}, {0, 0.4}, {1, 1}});
  EXPECT_DOUBLE_EQ(total.exactMatch, 50.0);
  EXPECT_DOUBLE_EQ(total.f1, 80.0);
  // One question: 100 · 2/3.
  EXPECT_DOUBLE_EQ(squadTotals({{0, 2.0 / 3.0}}).f1, 200.0 / 3.0);
}

} // namespace
} // namespace bertc

// Tests of the task scores: the best span of a window (hand-built logits), and the argmax
// scores of classification and token classification against hand-counted results.
#include "bertc/runtime/task_metrics.h"

#include <gtest/gtest.h>

using namespace bertc;

namespace {

/// [CLS] q [SEP] c0 c1 c2 c3 [SEP]: context tokens at positions 3..6.
SquadFeature windowOfFourContextTokens() {
  SquadFeature feature{};
  feature.inputIds = {1, 9, 2, 10, 11, 12, 13, 2};
  feature.contextStart = 3;
  return feature;
}

} // namespace

// The best start (5) lies after the best end (4), so the best valid pair is start 3,
// end 4 (1 + 2 = 3) rather than start 5, end 6 (2 + 0.5); [CLS] and the question are
// never chosen however large their logits.
TEST(BestSpan, PicksTheBestOrderedPairInsideTheContext) {
  SquadFeature feature = windowOfFourContextTokens();
  std::vector<float> starts = {9, 9, 9, 1, 0, 2, 0, 9};
  std::vector<float> ends = {9, 9, 9, 0, 2, 0, 0.5f, 9};
  std::optional<SpanChoice> best = bestSpan(starts.data(), ends.data(), feature);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->start, 3u);
  EXPECT_EQ(best->end, 4u);
  EXPECT_DOUBLE_EQ(best->score, 3.0);
}

// With answers at most 1 token long, start 3 end 4 is out: the best is start 5, end 5
// (2 + 0) = 2 against start 3, end 3 (1 + 0) and start 4, end 4 (0 + 2).
TEST(BestSpan, RespectsTheMaximumAnswerLength) {
  SquadFeature feature = windowOfFourContextTokens();
  std::vector<float> starts = {0, 0, 0, 1, 0, 2.5f, 0, 0};
  std::vector<float> ends = {0, 0, 0, 0, 2, 0, 0.5f, 0};
  std::optional<SpanChoice> best = bestSpan(starts.data(), ends.data(), feature, 1);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->start, 5u);
  EXPECT_EQ(best->end, 5u);
}

// Rows predicted [1, 0, 1, 1] against labels [1, 0, 0, 1]: accuracy 3/4; class 1 has
// TP 2, FP 1, FN 0, so F1 = 4 / 5.
TEST(ScoreClassification, AccuracyAndBinaryF1OfTheArgmax) {
  Dataset data{"dev", {}, LabelKind::Class};
  for (int32_t label : {1, 0, 0, 1})
    data.rows.push_back(Example{{1}, {0}, label});
  RowLogits logits = {{0.1f, 0.9f}, {2, -1}, {0, 3}, {-5, 5}};
  EvalScores scores = scoreClassification(logits, data, 2);
  ASSERT_EQ(scores.values.size(), 2u);
  EXPECT_EQ(scores.values[0].first, "accuracy");
  EXPECT_DOUBLE_EQ(scores.values[0].second, 0.75);
  EXPECT_EQ(scores.values[1].first, "f1");
  EXPECT_DOUBLE_EQ(scores.values[1].second, 0.8);
}

// Only labelled tokens count: of the 2 labelled tokens one is right.
TEST(ScoreTokenClassification, CountsOnlyLabelledTokens) {
  Dataset data{"dev", {}, LabelKind::TokenClass};
  Example row{{1, 5, 6, 2}, {0, 0, 0, 0}, 0};
  row.tokenLabels = {kIgnoredLabel, 2, kIgnoredLabel, 0};
  data.rows.push_back(row);
  RowLogits logits = {{9, 0, 0, 0, 0, 1, 0, 9, 0, 0, 5, 0}};
  EvalScores scores = scoreTokenClassification(logits, data, 3);
  EXPECT_DOUBLE_EQ(scores.values[0].second, 0.5);
}

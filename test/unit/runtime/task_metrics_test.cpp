// Tests of the task scores: the argmax scores of classification and token classification,
// and regression's, against hand-counted results (spans: squad_answers_test.cpp).
#include "bertc/runtime/task_metrics.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace bertc;

// Rows predicted [1, 0, 1, 1] against labels [1, 0, 0, 1]: accuracy 3/4; class 1 has
// TP 2, FP 1, FN 0 (TN 1), so F1 = 4 / 5 and Matthews' correlation
// (2·1 − 1·0) / √(3·2·2·1) = 2 / √12.
TEST(ScoreClassification, AccuracyAndBinaryF1OfTheArgmax) {
  Dataset data{"dev", {}, LabelKind::Class};
  for (int32_t label : {1, 0, 0, 1})
    data.rows.push_back(Example{{1}, {0}, label});
  RowLogits logits = {{0.1f, 0.9f}, {2, -1}, {0, 3}, {-5, 5}};
  EvalScores scores = scoreClassification(logits, data, 2);
  ASSERT_EQ(scores.values.size(), 3u);
  EXPECT_EQ(scores.values[0].first, "accuracy");
  EXPECT_DOUBLE_EQ(scores.values[0].second, 0.75);
  EXPECT_EQ(scores.values[1].first, "f1");
  EXPECT_DOUBLE_EQ(scores.values[1].second, 0.8);
  EXPECT_EQ(scores.values[2].first, "matthews_correlation");
  EXPECT_NEAR(scores.values[2].second, 2.0 / std::sqrt(12.0), 1e-12);
}

// Predictions [1, 3, 2] against targets [1, 2, 3]: MSE (0 + 1 + 1) / 3; deviations from the
// means (2, 2) are −1, 1, 0 and −1, 0, 1, so Pearson's r = 1 / √(2·2) = 0.5, and the ranks
// are the values, so Spearman's too. Predictions [1, 30, 2] rank the same (Spearman 0.5)
// but correlate otherwise: deviations −10, 19, −9 give Pearson (10 − 9) / √(542·2).
TEST(ScoreRegression, MseAndCorrelations) {
  Dataset data{"dev", {}, LabelKind::Target};
  for (float target : {1.0f, 2.0f, 3.0f}) {
    data.rows.push_back(Example{{1}, {0}, 0});
    data.rows.back().target = target;
  }
  EvalScores scores = scoreRegression({{1}, {3}, {2}}, data);
  ASSERT_EQ(scores.values.size(), 3u);
  EXPECT_EQ(scores.values[0].first, "mse");
  EXPECT_DOUBLE_EQ(scores.values[0].second, 2.0 / 3.0);
  EXPECT_EQ(scores.values[1].first, "pearson");
  EXPECT_NEAR(scores.values[1].second, 0.5, 1e-12);
  EXPECT_EQ(scores.values[2].first, "spearmanr");
  EXPECT_NEAR(scores.values[2].second, 0.5, 1e-12);
  EvalScores ranked = scoreRegression({{1}, {30}, {2}}, data);
  EXPECT_NEAR(ranked.values[1].second, 1.0 / std::sqrt(542.0 * 2.0), 1e-12);
  EXPECT_NEAR(ranked.values[2].second, 0.5, 1e-12);
}

// With entity tags for names: rows tagged [B-PER, I-PER] and [O, B-PER] are predicted
// [B-PER, O] and [O, B-PER]: accuracy 3/4; entities PER 0-1 and PER 4 (the second row's,
// after the first row's end) against PER 0 and PER 4: P = R = F1 = 1/2.
TEST(ScoreTokenClassification, EntityScoresWhereTheClassesAreTags) {
  Dataset data{"dev", {}, LabelKind::TokenClass};
  for (std::vector<int32_t> tags : {std::vector<int32_t>{1, 2}, std::vector<int32_t>{0, 1}}) {
    data.rows.push_back(Example{{5, 6}, {0, 0}, 0});
    data.rows.back().tokenLabels = tags;
  }
  // Classes O, B-PER, I-PER; logits pick [1, 0] and [0, 1].
  RowLogits logits = {{0, 5, 0, 5, 0, 0}, {5, 0, 0, 0, 5, 0}};
  EvalScores scores = scoreTokenClassification(logits, data, 3, {"O", "B-PER", "I-PER"});
  ASSERT_EQ(scores.values.size(), 4u);
  EXPECT_DOUBLE_EQ(scores.values[0].second, 0.75);
  EXPECT_EQ(scores.values[3].first, "f1");
  EXPECT_DOUBLE_EQ(scores.values[1].second, 0.5);
  EXPECT_DOUBLE_EQ(scores.values[2].second, 0.5);
  EXPECT_DOUBLE_EQ(scores.values[3].second, 0.5);
  // Names that are no tags (HF's defaults) give accuracy alone.
  EXPECT_EQ(
      scoreTokenClassification(logits, data, 3, {"LABEL_0", "LABEL_1", "LABEL_2"}).values.size(),
      1u);
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

// Answers from span logits as run_qa.py post-processes them, on hand-built logits whose
// rankings are worked out in the comments: the best spans of a window, the n best of a
// question over its windows with their probabilities, SQuAD v2.0's "no answer", the
// "empty" entry, the two JSON files and the scores.
#include "bertc/runtime/squad_answers.h"

#include "bertc/runtime/task_metrics.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>

namespace bertc {
namespace {

using testing::ScratchDir;
using testing::writeText;

/// One window [CLS] q [SEP] c0 c1 c2 c3 [SEP]: context tokens at positions 3..6.
SquadFeatures windowOfFourContextTokens() {
  SquadFeatures features;
  features.features.push_back(SquadFeature{});
  features.features[0].inputIds = {1, 9, 2, 10, 11, 12, 13, 2};
  features.features[0].contextStart = 3;
  return features;
}

/// (start, end) of each span.
std::vector<std::pair<size_t, size_t>> positions(const std::vector<SpanChoice> &spans) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const SpanChoice &span : spans)
    out.emplace_back(span.start, span.end);
  return out;
}

// Starts (3..6) 1 0 2 0, ends 0 2 0 0.5: the valid spans score
//   (3,3) 1  (3,4) 3  (3,5) 1    (3,6) 1.5
//            (4,4) 2  (4,5) 0    (4,6) 0.5
//                     (5,5) 2    (5,6) 2.5
//                                (6,6) 0.5
// so the four best are (3,4) 3, (5,6) 2.5, then the tie at 2 by earlier start: (4,4),
// (5,5). The best start (5) lies after the best end (4). With 100 candidates on each side
// every start and end is one; [CLS], the question and [SEP] are never chosen however large
// their logits.
TEST(BestSpans, RanksEveryOrderedPairInsideTheContext) {
  SquadFeatures features = windowOfFourContextTokens();
  std::vector<float> starts = {9, 9, 9, 1, 0, 2, 0, 9};
  std::vector<float> ends = {9, 9, 9, 0, 2, 0, 0.5f, 9};
  std::vector<SpanChoice> best = bestSpans(starts.data(), ends.data(), features, 0, 30, 100);
  best.resize(4);
  EXPECT_EQ(positions(best),
            (std::vector<std::pair<size_t, size_t>>{{3, 4}, {5, 6}, {4, 4}, {5, 5}}));
  EXPECT_DOUBLE_EQ(best[0].score, 3.0);
  EXPECT_EQ(best[0].startLogit, 1.0f);
  EXPECT_EQ(best[0].endLogit, 2.0f);
  EXPECT_EQ(bestSpans(starts.data(), ends.data(), features, 0, 30, 100).size(), 10u);
}

// As run_qa.py: the spans pair the 3 highest starts with the 3 highest ends. Starts (3..6)
// 1 0 2 0 and 0 elsewhere give 5, 3 and, of the zeros, the latest position, 7 ([SEP]); ends
// 0 2 0 0.5 give 4, 6 and 7. The valid pairs are (3,4) 3, (5,6) 2.5 and (3,6) 1.5: (4,4)
// and (5,5), which score 2, have a start or an end outside the candidates. With the
// [CLS] and question logits highest, no candidate start is in the context: no span.
TEST(BestSpans, PairsOnlyTheHighestStartsAndEnds) {
  SquadFeatures features = windowOfFourContextTokens();
  std::vector<float> starts = {0, 0, 0, 1, 0, 2, 0, 0};
  std::vector<float> ends = {0, 0, 0, 0, 2, 0, 0.5f, 0};
  EXPECT_EQ(positions(bestSpans(starts.data(), ends.data(), features, 0, 30, 3)),
            (std::vector<std::pair<size_t, size_t>>{{3, 4}, {5, 6}, {3, 6}}));
  std::vector<float> high = {9, 9, 9, 1, 0, 2, 0, 0};
  EXPECT_TRUE(bestSpans(high.data(), ends.data(), features, 0, 30, 3).empty());
}

// With answers at most 1 token long only (3,3) 1, (4,4) 2, (5,5) 2.5 and (6,6) 0.5 remain
// (every position a candidate).
TEST(BestSpans, RespectsTheMaximumAnswerLength) {
  SquadFeatures features = windowOfFourContextTokens();
  std::vector<float> starts = {0, 0, 0, 1, 0, 2.5f, 0, 0};
  std::vector<float> ends = {0, 0, 0, 0, 2, 0, 0.5f, 0};
  EXPECT_EQ(positions(bestSpans(starts.data(), ends.data(), features, 0, 1, 8)),
            (std::vector<std::pair<size_t, size_t>>{{5, 5}, {4, 4}, {3, 3}, {6, 6}}));
}

/// Question "x" ("q", answer "b c") about "a b c d e f g h i j", and on v2.0 also the
/// impossible "y", in sequences of 10 tokens: windows of 6 context tokens sharing 2,
/// [a b c d e f] and [e f g h i j], both at positions 3..8 after [CLS] q [SEP].
struct Letters {
  ScratchDir dir;
  std::optional<Tokenizer> tokenizer;
  SquadDataset squad;
  SquadFeatures features;

  explicit Letters(bool v2) {
    writeText(dir.file("vocab.txt"),
              "[PAD]\n[UNK]\n[CLS]\n[SEP]\na\nb\nc\nd\ne\nf\ng\nh\ni\nj\nq\n");
    tokenizer.emplace(Vocab::load(dir.file("vocab.txt")), TokenizerSettings{});
    std::string impossible =
        v2 ? R"(, {"id": "y", "question": "q", "answers": [], "is_impossible": true})" : "";
    writeText(dir.file("dev.json"), R"({"data": [{"paragraphs": [{"context": "a b c d e f g h i j",
        "qas": [{"id": "x", "question": "q", "answers": [{"text": "b c", "answer_start": 2}]})" +
                                        impossible + "]}]}]}");
    squad = loadSquadDataset(dir.file("dev.json"));
    SquadOptions options;
    options.docStride = 2;
    features = buildSquadFeatures(squad, *tokenizer, 10, options);
  }
};

/// Start then end logits of one 10-token window: -5 but where `starts` and `ends` say.
std::vector<float> windowLogits(std::vector<std::pair<size_t, float>> starts,
                                std::vector<std::pair<size_t, float>> ends) {
  std::vector<float> logits(20, -5.0f);
  for (auto [position, logit] : starts)
    logits[position] = logit;
  for (auto [position, logit] : ends)
    logits[10 + position] = logit;
  return logits;
}

/// Logits of question "x" in its two windows (positions 3..8 hold a..f, then e..j):
///   window 0: start b (4) 2, end b (4) 0.5, end c (5) 1: "b c" 3, "b" 2.5;
///   window 1: start g (5) 2.8, end g (5) 0:              "g" 2.8;
/// every other span has a -5 and scores -2.2 or less. [CLS] sums: `cls0`, `cls1`.
std::vector<std::vector<float>> questionX(std::pair<float, float> cls0 = {-5, -5},
                                          std::pair<float, float> cls1 = {-5, -5}) {
  return {windowLogits({{0, cls0.first}, {4, 2}}, {{0, cls0.second}, {4, 0.5f}, {5, 1}}),
          windowLogits({{0, cls1.first}, {5, 2.8f}}, {{0, cls1.second}, {5, 0}})};
}

std::vector<std::string> texts(const QuestionPrediction &prediction) {
  std::vector<std::string> out;
  for (const RankedAnswer &answer : prediction.nBest)
    out.push_back(answer.text);
  return out;
}

// The three best spans over both windows are "b c" 3, "g" 2.8 and "b" 2.5; their
// probabilities are the softmax of those scores, 1 : e^-0.2 : e^-0.5 before normalizing.
TEST(PredictAnswers, RanksTheNBestSpansOverAllWindows) {
  Letters letters(false);
  ASSERT_EQ(letters.features.features.size(), 2u);
  SquadOptions options;
  options.nBest = 3;
  std::vector<QuestionPrediction> predictions =
      predictAnswers(questionX(), letters.squad, letters.features, options);
  ASSERT_EQ(predictions.size(), 1u);
  EXPECT_EQ(predictions[0].text, "b c");
  EXPECT_EQ(texts(predictions[0]), (std::vector<std::string>{"b c", "g", "b"}));
  double total = 1 + std::exp(-0.2) + std::exp(-0.5);
  EXPECT_NEAR(predictions[0].nBest[0].probability, 1 / total, 1e-6);
  EXPECT_NEAR(predictions[0].nBest[1].probability, std::exp(-0.2) / total, 1e-6);
  EXPECT_NEAR(predictions[0].nBest[2].probability, std::exp(-0.5) / total, 1e-6);
  EXPECT_EQ(predictions[0].nBest[1].startLogit, 2.8f);

  // Answers of one token: "g" 2.8, "b" 2.5, then of the 3 highest starts and ends of each
  // window (the -5s latest first: positions 9 and 8) "j", window 1's position 8, -10; "c"
  // (start -5 at 5, end 1) scores -4 but its start is no candidate, as in run_qa.py.
  options.maxAnswerLength = 1;
  EXPECT_EQ(texts(predictAnswers(questionX(), letters.squad, letters.features, options)[0]),
            (std::vector<std::string>{"g", "b", "j"}));
}

// On v2.0 "no answer" scores the smallest [CLS] start + end of the question's windows.
//  x: [CLS] sums 4 + 0 and 1 + 1, so "no answer" is 2 (logits 1, 1), below the best span
//     "b c" 3: the prediction is "b c"; with n_best 3 the spans fill the list and "no
//     answer" is appended as a fourth entry.
//  y: [CLS] sums 5 + 1 and 4 + 4, so "no answer" is 6 (logits 5, 1), above every span: the
//     prediction is "", ranked first, and the list keeps n_best entries.
TEST(PredictAnswers, V2NoAnswerIsTheSmallestClsScore) {
  Letters letters(true);
  ASSERT_EQ(letters.features.features.size(), 4u);
  std::vector<std::vector<float>> logits = questionX({4, 0}, {1, 1});
  for (const std::vector<float> &window : questionX({5, 1}, {4, 4}))
    logits.push_back(window);
  SquadOptions options;
  options.nBest = 3;
  std::vector<QuestionPrediction> predictions =
      predictAnswers(logits, letters.squad, letters.features, options);
  EXPECT_EQ(predictions[0].text, "b c");
  EXPECT_EQ(texts(predictions[0]), (std::vector<std::string>{"b c", "g", "b", ""}));
  EXPECT_EQ(predictions[0].nBest[3].startLogit, 1.0f);
  EXPECT_EQ(predictions[0].nBest[3].endLogit, 1.0f);
  EXPECT_EQ(predictions[1].text, "");
  EXPECT_EQ(texts(predictions[1]), (std::vector<std::string>{"", "b c", "g"}));
  EXPECT_EQ(predictions[1].nBest[0].startLogit, 5.0f);
  // softmax of 6, 3, 2.8
  double total = 1 + std::exp(-3.0) + std::exp(-3.2);
  EXPECT_NEAR(predictions[1].nBest[0].probability, 1 / total, 1e-6);
}

// An impossible question about an empty context has no span, only "no answer": run_qa.py
// then puts an entry "empty" (logits 0, score 0) first, and predicts "" only when "no
// answer" scores above 0 - which it does with [CLS] logits 1 + 1, not with -2 + -1.
TEST(PredictAnswers, NoSpanAnywhereAddsEmpty) {
  ScratchDir dir;
  writeText(dir.file("vocab.txt"), "[PAD]\n[UNK]\n[CLS]\n[SEP]\nq\n");
  Tokenizer tokenizer(Vocab::load(dir.file("vocab.txt")), TokenizerSettings{});
  writeText(dir.file("dev.json"), R"({"data": [{"paragraphs": [{"context": "", "qas": [
      {"id": "z", "question": "q", "answers": [], "is_impossible": true}]}]}]})");
  SquadDataset squad = loadSquadDataset(dir.file("dev.json"));
  SquadOptions options;
  options.docStride = 1;
  SquadFeatures features = buildSquadFeatures(squad, tokenizer, 8, options); // [CLS] q [SEP] [SEP]
  auto predict = [&](float clsStart, float clsEnd) {
    std::vector<std::vector<float>> logits = {{clsStart, 0, 0, 0, clsEnd, 0, 0, 0}};
    return predictAnswers(logits, squad, features, {})[0];
  };
  QuestionPrediction confident = predict(1, 1);
  EXPECT_EQ(confident.text, "");
  EXPECT_EQ(texts(confident), (std::vector<std::string>{"empty", ""}));
  EXPECT_NEAR(confident.nBest[1].probability, std::exp(2.0) / (1 + std::exp(2.0)), 1e-9);
  EXPECT_EQ(predict(-2, -1).text, "empty");
}

// The files run_qa.py writes: predictions.json maps each id to its text, in file order;
// nbest_predictions.json lists start_logit, end_logit, text and probability.
TEST(PredictAnswers, WritesRunQaFiles) {
  Letters letters(true);
  std::vector<std::vector<float>> logits = questionX({4, 0}, {1, 1});
  for (const std::vector<float> &window : questionX({5, 1}, {4, 4}))
    logits.push_back(window);
  SquadOptions options;
  options.nBest = 3;
  std::vector<QuestionPrediction> predictions =
      predictAnswers(logits, letters.squad, letters.features, options);
  EXPECT_EQ(predictionsJson(letters.squad, predictions),
            "{\n    \"x\": \"b c\",\n    \"y\": \"\"\n}\n");
  nlohmann::json nBest = nlohmann::json::parse(nBestPredictionsJson(letters.squad, predictions));
  // x: "b c" 3, "g" 2.8, "b" 2.5, then "no answer" 2, appended after the spans kept (2.8 as
  // a float logit: 1e-6).
  ASSERT_EQ(nBest["x"].size(), 4u);
  EXPECT_EQ(nBest["x"][0]["text"], "b c");
  EXPECT_EQ(nBest["x"][0]["start_logit"], 2.0);
  EXPECT_EQ(nBest["x"][0]["end_logit"], 1.0);
  EXPECT_NEAR(nBest["x"][0]["probability"].get<double>(),
              1 / (1 + std::exp(-0.2) + std::exp(-0.5) + std::exp(-1.0)), 1e-6);
  EXPECT_EQ(nBest["x"][3]["text"], "");
  // y: "no answer" 6 outranks "b c" 3 and "g" 2.8, and the list keeps n_best entries.
  ASSERT_EQ(nBest["y"].size(), 3u);
  EXPECT_EQ(nBest["y"][0]["text"], "");
  EXPECT_NEAR(nBest["y"][0]["probability"].get<double>(), 1 / (1 + std::exp(-3.0) + std::exp(-3.2)),
              1e-6);
  // With one candidate start and end per window, as run_qa.py pairs them, x has no span:
  // window 0's best start is [CLS] (4), window 1's best end is [CLS] (1). Its entries are
  // "empty" (score 0) and "no answer" (2), which is predicted.
  options.nBest = 1;
  std::vector<QuestionPrediction> single =
      predictAnswers(logits, letters.squad, letters.features, options);
  EXPECT_EQ(texts(single[0]), (std::vector<std::string>{"empty", ""}));
  EXPECT_EQ(single[0].text, "");
  std::string text = nBestPredictionsJson(letters.squad, predictions);
  EXPECT_LT(text.find("\"start_logit\""), text.find("\"end_logit\""));
  EXPECT_LT(text.find("\"end_logit\""), text.find("\"text\""));
  EXPECT_LT(text.find("\"text\""), text.find("\"probability\""));
}

// scoreSpans scores the predictions (x answered "b c" exactly; y, impossible, answered ""),
// and hands the files to the best model's folder.
TEST(ScoreSpans, ScoresPredictionsAndKeepsTheirFiles) {
  Letters letters(true);
  TaskData task;
  task.squad = letters.squad;
  task.features = letters.features;
  task.data.rows.resize(letters.features.features.size());
  RowLogits logits = questionX({4, 0}, {1, 1});
  for (const std::vector<float> &window : questionX({5, 1}, {4, 4}))
    logits.push_back(window);
  EvalScores scores = scoreSpans(logits, task);
  EXPECT_EQ(scores.values[0], std::make_pair(std::string("f1"), 100.0));
  EXPECT_EQ(scores.values[1], std::make_pair(std::string("exact_match"), 100.0));
  ASSERT_EQ(scores.files.size(), 2u);
  EXPECT_EQ(scores.files[0].first, "predictions.json");
  EXPECT_EQ(
      scores.files[0].second,
      predictionsJson(letters.squad, predictAnswers(logits, letters.squad, letters.features, {})));
  EXPECT_EQ(scores.files[1].first, "nbest_predictions.json");
}

} // namespace
} // namespace bertc

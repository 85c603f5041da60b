// SQuAD reading and features on small hand-written files: v1.1 and v2.0 questions, answers
// located in code points, run_qa.py's windows (doc_stride tokens shared) and the answer that
// straddles two of them, questions cut only by max_query_length, the answer -> token
// positions -> text round trip on accented, punctuated paragraphs, and one located error per
// kind of malformed file or question that cannot be windowed (squad_errors_test.cpp).
#include "squad_test_files.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace bertc::squad_test {
namespace {

TEST(SquadData, ReadsV11) {
  ScratchDir dir;
  SquadDataset data = load(dir, towerFile(std::string("[{") + kWhere + R"(, "answers": [
      {"text": "Paris", "answer_start": 23}, {"text": "in Paris", "answer_start": 20}]}])"));
  ASSERT_EQ(data.paragraphs.size(), 1u);
  EXPECT_EQ(data.paragraphs[0].title, "Eiffel_Tower");
  ASSERT_EQ(data.examples.size(), 1u);
  const SquadExample &example = data.examples[0];
  EXPECT_EQ(example.id, "q1");
  EXPECT_EQ(example.question, "Where is the Eiffel Tower?");
  EXPECT_FALSE(example.isImpossible);
  ASSERT_EQ(example.answers.size(), 2u);
  EXPECT_EQ(example.answers[1].answerStart, 20);
  EXPECT_EQ(example.answers[1].span.begin, 20u);
  EXPECT_EQ(example.answers[1].span.end, 28u);
  EXPECT_TRUE(data.mismatchedAnswers.empty());
}

TEST(SquadData, AnswerStartCountsCodePoints) {
  ScratchDir dir;
  // "Zoë Saldaña " is 12 characters but 14 bytes.
  SquadDataset data = load(dir, R"({"data": [{"title": "Film", "paragraphs": [
      {"context": "Zoë Saldaña starred in «Avatar».", "qas": [{"id": "z",
       "question": "Who starred?",
       "answers": [{"text": "starred", "answer_start": 12}]}]}]}]})");
  EXPECT_EQ(data.examples[0].answers[0].span.begin, 14u);
  EXPECT_EQ(data.examples[0].answers[0].span.end, 21u);
  EXPECT_TRUE(data.mismatchedAnswers.empty());
}

TEST(SquadData, BuildsOneFeaturePerShortContext) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  SquadDataset data = load(dir, whereIsTheTowerFile());
  SquadFeatures features = buildSquadFeatures(data, tokenizer, 384);
  ASSERT_EQ(features.features.size(), 1u);
  const SquadFeature &feature = features.features[0];
  EXPECT_EQ(tokensOf(tokenizer, feature.inputIds),
            (Strings{"[CLS]", "where", "is", "the", "eiffel", "tower", "?", "[SEP]", "the",
                     "eiffel", "tower", "is", "in", "paris", ".", "[SEP]"}));
  EXPECT_EQ(feature.tokenTypeIds,
            (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(feature.contextStart, 8u);
  EXPECT_EQ(feature.contextTokens(), 7u);
  EXPECT_EQ(feature.startPosition, 13);
  EXPECT_EQ(feature.endPosition, 13);

  EXPECT_EQ(predictedAnswerText(data, features, 0, 13, 13), "Paris");
  EXPECT_EQ(predictedAnswerText(data, features, 0, 12, 14), "in Paris.");
  EXPECT_EQ(predictedAnswerText(data, features, 0, 8, 8), "The");
  EXPECT_FALSE(predictedAnswerText(data, features, 0, 13, 12)); // end before start
  EXPECT_FALSE(predictedAnswerText(data, features, 0, 7, 13));  // starts on [SEP]
  EXPECT_FALSE(predictedAnswerText(data, features, 0, 13, 15)); // ends on the last [SEP]
  EXPECT_FALSE(predictedAnswerText(data, features, 0, 0, 0));   // [CLS]: no answer
}

TEST(SquadData, V2ImpossibleQuestionsPointAtCls) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  SquadDataset data = load(dir, towerFile(std::string("[{") + kWhere + R"(,
      "answers": [{"text": "Paris", "answer_start": 23}], "is_impossible": false},
      {"id": "q2", "question": "Who built the tower?", "answers": [],
       "plausible_answers": [{"text": "Paris", "answer_start": 23}],
       "is_impossible": true}])"));
  ASSERT_EQ(data.examples.size(), 2u);
  EXPECT_FALSE(data.examples[0].isImpossible);
  EXPECT_TRUE(data.examples[1].isImpossible);
  EXPECT_TRUE(data.examples[1].answers.empty());
  SquadFeatures features = buildSquadFeatures(data, tokenizer, 384);
  ASSERT_EQ(features.features.size(), 2u);
  EXPECT_EQ(features.features[0].startPosition, 13);
  EXPECT_EQ(features.features[1].example, 1u);
  EXPECT_EQ(features.features[1].startPosition, 0);
  EXPECT_EQ(features.features[1].endPosition, 0);
  // Both questions share the paragraph's token spans.
  ASSERT_EQ(features.contextTokenSpans.size(), 1u);
  EXPECT_EQ(features.contextTokenSpans[0].size(), 7u);
}

TEST(SquadData, AnswerStraddlingWindowsIsLabelledWhereItIsWhole) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  // Context tokens a..j (a at 0, b at 2, ...); "c d" starts at 4, "d e" at 6.
  SquadDataset data = load(dir, R"({"data": [{"title": "Letters", "paragraphs": [
      {"context": "a b c d e f g h i j", "qas": [
        {"id": "de", "question": "q r s", "answers": [{"text": "d e", "answer_start": 6}]},
        {"id": "cd", "question": "q",
         "answers": [{"text": "c d", "answer_start": 4}]}]}]}]})");
  // The question is cut to "q r", leaving 8 - 2 - 3 = 3 context tokens per window;
  // consecutive windows share 1, so each starts 3 - 1 = 2 tokens after the previous one:
  // [a b c] [c d e] [e f g] [g h i] [i j].
  SquadOptions options;
  options.docStride = 1;
  options.maxQueryLength = 2;
  SquadFeatures features = buildSquadFeatures(data, tokenizer, 8, options);
  ASSERT_EQ(features.features.size(), 5u + 3u);
  std::vector<std::pair<int32_t, int32_t>> positions;
  for (size_t w = 0; w < 5; ++w) {
    const SquadFeature &feature = features.features[w];
    EXPECT_EQ(feature.example, 0u);
    EXPECT_EQ(feature.window, w);
    EXPECT_EQ(feature.firstContextToken, 2 * w);
    EXPECT_EQ(feature.contextStart, 4u);
    positions.emplace_back(feature.startPosition, feature.endPosition);
  }
  EXPECT_EQ(tokensOf(tokenizer, features.features[1].inputIds),
            (Strings{"[CLS]", "q", "r", "[SEP]", "c", "d", "e", "[SEP]"}));
  EXPECT_EQ(tokensOf(tokenizer, features.features[4].inputIds),
            (Strings{"[CLS]", "q", "r", "[SEP]", "i", "j", "[SEP]"}));
  // "d e" is whole only in [c d e]; [e f g] holds half of it.
  EXPECT_EQ(positions,
            (std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {5, 6}, {0, 0}, {0, 0}, {0, 0}}));
  EXPECT_EQ(predictedAnswerText(data, features, 1, 5, 6), "d e");

  // With a one-token question, 4 context tokens per window starting 3 apart:
  // [a b c d] [d e f g] [g h i j]; only the first holds all of "c d".
  const SquadFeature &first = features.features[5], &second = features.features[6];
  EXPECT_EQ(first.example, 1u);
  EXPECT_EQ(first.startPosition, 5); // [CLS] q [SEP] a b c d: c at 5, d at 6
  EXPECT_EQ(first.endPosition, 6);
  EXPECT_EQ(second.firstContextToken, 3u);
  EXPECT_EQ(second.startPosition, 0);
  EXPECT_EQ(features.features[7].firstContextToken, 6u);
}

// An answer that starts in a window's last context token is labelled there; run_qa.py's
// search for its start runs on past that token (the [SEP] and padding have offsets (0, 0))
// and labels the row's last position.
TEST(SquadData, AnAnswerStartingInAWindowsLastContextTokenIsLabelledThere) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  SquadDataset data = load(dir, R"({"data": [{"title": "Letters", "paragraphs": [
      {"context": "a b c d e f g h i j", "qas": [
        {"id": "d", "question": "q", "answers": [{"text": "d", "answer_start": 6}]}]}]}]})");
  SquadOptions options;
  options.docStride = 1;
  SquadFeatures features = buildSquadFeatures(data, tokenizer, 8, options);
  const SquadFeature &first = features.features.at(0);
  EXPECT_EQ(tokensOf(tokenizer, first.inputIds),
            (Strings{"[CLS]", "q", "[SEP]", "a", "b", "c", "d", "[SEP]"}));
  EXPECT_EQ(first.startPosition, 6);
  EXPECT_EQ(first.endPosition, 6);
}

/// Adds a question with one answer, located by its first occurrence in the context.
void addQuestion(nlohmann::json &qas, const std::string &context, const std::string &question,
                 const std::string &answer) {
  size_t byte = context.find(answer);
  ASSERT_NE(byte, std::string::npos) << answer;
  int64_t chars = 0;
  for (size_t at = 0; at < byte; ++at)
    chars += (uint8_t(context[at]) & 0xC0) != 0x80;
  qas.push_back({{"id", "q" + std::to_string(qas.size()) + "-" + answer},
                 {"question", question},
                 {"answers", {{{"text", answer}, {"answer_start", chars}}}}});
}

TEST(SquadData, AnswersRoundTripThroughTokenPositions) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  using Qa = std::pair<std::string, std::string>;
  struct Paragraph {
    const char *title, *context;
    std::vector<Qa> qas;
  };
  std::vector<Paragraph> paragraphs = {
      {"Film",
       "Zoë Saldaña starred in «Avatar» (2009), directed by James Cameron; it earned $2.9 "
       "billion!",
       {{"Who directed «Avatar»?", "James Cameron"},
        {"When was Avatar released?", "2009"},
        {"Who starred in it?", "Zoë Saldaña"},
        {"How much did it earn?", "$2.9 billion"},
        {"Who starred?", "(2009)"}}},
      {"Café",
       "Le Café de Flore, à Paris, est célèbre — il a ouvert en 1887.",
       {{"Où est le café?", "Paris"},
        {"Quand a-t-il ouvert?", "1887"},
        {"Quel café?", "Café de Flore"},
        {"Comment est-il?", "célèbre"}}},
      {"Café",
       "Jean-Paul Sartre y écrivait. Simone de Beauvoir aussi.",
       {{"Qui écrivait?", "Jean-Paul Sartre"}, {"Qui d'autre?", "Simone de Beauvoir"}}}};
  nlohmann::json file = {{"version", "1.1"}, {"data", nlohmann::json::array()}};
  for (const Paragraph &paragraph : paragraphs) {
    nlohmann::json qas = nlohmann::json::array();
    for (const auto &[question, answer] : paragraph.qas)
      addQuestion(qas, paragraph.context, question, answer);
    file["data"].push_back({{"title", paragraph.title},
                            {"paragraphs", {{{"context", paragraph.context}, {"qas", qas}}}}});
  }
  SquadDataset data = load(dir, file.dump(2));
  ASSERT_EQ(data.examples.size(), 11u);
  EXPECT_TRUE(data.mismatchedAnswers.empty());

  // Small windows, so that most answers are whole in some windows and cut in others. With
  // questions cut to 8 tokens a window holds at least 20 - 8 - 3 = 9 context tokens;
  // sharing 5 with the next, every span of up to 6 tokens ("$ 2 . 9 bill ##ion") is whole
  // in some window.
  SquadOptions options;
  options.docStride = 5;
  options.maxQueryLength = 8;
  SquadFeatures features = buildSquadFeatures(data, tokenizer, 20, options);
  std::vector<int> labelled(data.examples.size());
  for (size_t f = 0; f < features.features.size(); ++f) {
    const SquadFeature &feature = features.features[f];
    if (feature.startPosition == 0)
      continue;
    ++labelled[feature.example];
    const std::string &answer = data.examples[feature.example].answers[0].text;
    EXPECT_EQ(predictedAnswerText(data, features, f, size_t(feature.startPosition),
                                  size_t(feature.endPosition)),
              answer)
        << "window " << feature.window;
  }
  for (size_t e = 0; e < data.examples.size(); ++e)
    EXPECT_GT(labelled[e], 0) << data.examples[e].id;
  EXPECT_GT(features.features.size(), data.examples.size()); // some contexts needed windows
}

TEST(SquadData, EmptyContextGetsOneEmptyWindow) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  SquadDataset data = load(dir, R"({"data": [{"paragraphs": [{"context": "", "qas": [
      {"id": "x", "question": "Who?", "answers": [], "is_impossible": true}]}]}]})");
  EXPECT_EQ(data.paragraphs[0].title, "");
  SquadFeatures features = buildSquadFeatures(data, tokenizer, 384);
  ASSERT_EQ(features.features.size(), 1u);
  EXPECT_EQ(features.features[0].contextTokens(), 0u);
  EXPECT_EQ(tokensOf(tokenizer, features.features[0].inputIds),
            (Strings{"[CLS]", "who", "?", "[SEP]", "[SEP]"}));
}

// Ten context tokens a..j after a one-token question in sequences of 10 tokens: a window
// holds 10 - 1 - 3 = 6 of them. run_qa.py's stride is what consecutive windows share, so
// they start 6 - stride apart, the last being the first to reach j:
//   stride 2: starts 0, 4         -> [a..f] [e..j]
//   stride 4: starts 0, 2, 4      -> [a..f] [c..h] [e..j]
//   stride 0: starts 0, 6         -> [a..f] [g..j]
// (The layout of run_squad.py, whose windows start doc_stride apart, would give 0, 2, 4
// for stride 2.)
TEST(SquadData, WindowsShareDocStrideTokens) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  SquadDataset data = load(dir, R"({"data": [{"title": "Letters", "paragraphs": [
      {"context": "a b c d e f g h i j", "qas": [
        {"id": "x", "question": "q", "answers": [{"text": "e", "answer_start": 8}]}]}]}]})");
  auto firstTokens = [&](size_t stride) {
    SquadOptions options;
    options.docStride = stride;
    std::vector<size_t> firsts;
    for (const SquadFeature &feature : buildSquadFeatures(data, tokenizer, 10, options).features)
      firsts.push_back(feature.firstContextToken);
    return firsts;
  };
  EXPECT_EQ(firstTokens(2), (std::vector<size_t>{0, 4}));
  EXPECT_EQ(firstTokens(4), (std::vector<size_t>{0, 2, 4}));
  EXPECT_EQ(firstTokens(0), (std::vector<size_t>{0, 6}));
  // A sequence that holds all of it (1 + 1 + 1 + 10 + 1 = 14 tokens) is one window.
  SquadOptions options;
  options.docStride = 4;
  EXPECT_EQ(buildSquadFeatures(data, tokenizer, 14, options).features.size(), 1u);
}

// run_qa.py does not cut questions: "where is the eiffel tower ?" keeps its 6 tokens unless
// max_query_length is set; cut to 2, the window holds 18 - 2 - 3 = 13 context tokens.
TEST(SquadData, QuestionsAreCutOnlyByMaxQueryLength) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  SquadDataset data = load(dir, whereIsTheTowerFile());
  SquadOptions options;
  options.docStride = 1;
  SquadFeature whole = buildSquadFeatures(data, tokenizer, 18, options).features.at(0);
  EXPECT_EQ(whole.contextStart, 8u); // [CLS] + 6 question tokens + [SEP]
  options.maxQueryLength = 2;
  SquadFeature cut = buildSquadFeatures(data, tokenizer, 18, options).features.at(0);
  EXPECT_EQ(tokensOf(tokenizer, cut.inputIds),
            (Strings{"[CLS]", "where", "is", "[SEP]", "the", "eiffel", "tower", "is", "in", "paris",
                     ".", "[SEP]"}));
}

} // namespace
} // namespace bertc::squad_test

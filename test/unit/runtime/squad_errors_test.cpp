// SQuAD files and questions bertc refuses or counts, each with a located error: questions
// that cannot be windowed, feature options that leave no room for the context, answers
// whose text does not match, malformed files and inconsistent answers, a missing file.
#include "squad_test_files.h"

#include <gtest/gtest.h>

namespace bertc::squad_test {
namespace {

// A question whose tokens leave no context token in the sequence, or whose context needs
// windows that cannot advance (doc_stride >= the window), is refused by name, as the
// tokenizers library refuses it; a question as long whose context fits is fine.
TEST(SquadData, QuestionsThatCannotBeWindowedNameFileAndId) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  SquadDataset data = load(dir, whereIsTheTowerFile());
  std::string file = dir.file("dev.json");
  SquadOptions options;
  options.docStride = 1;
  // 1 + 6 + 1 + 1 = 9 tokens leave no context token in 9.
  EXPECT_EQ(errorOf([&] { buildSquadFeatures(data, tokenizer, 9, options); }),
            file + ": question 'q1': its 6 tokens leave no room for context in a sequence of "
                   "9 tokens ([CLS] question [SEP] context [SEP]); set [data] max_query_length "
                   "to cut questions");
  EXPECT_THROW(buildSquadFeatures(data, tokenizer, 9, options), SquadError);
  // In 12, windows of 12 - 6 - 3 = 3 context tokens for 7: sharing 3 they cannot advance.
  options.docStride = 3;
  EXPECT_EQ(errorOf([&] { buildSquadFeatures(data, tokenizer, 12, options); }),
            file + ": question 'q1': its context (7 tokens) needs windows, which hold 3 tokens "
                   "beside its 6 question tokens: [data] doc_stride 3 must be less than that "
                   "(or set max_query_length)");
  // In 16 (room 7) the context fits: one window, stride 3 unused.
  EXPECT_EQ(buildSquadFeatures(data, tokenizer, 16, options).features.size(), 1u);
}

TEST(SquadData, FeatureOptionsMustLeaveRoomForContext) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir);
  SquadDataset data = load(dir, whereIsTheTowerFile());
  SquadOptions options;
  options.docStride = 1;
  EXPECT_THROW(buildSquadFeatures(data, tokenizer, 3, options), std::invalid_argument);
  // A window of 67 tokens holds at most 64 context tokens; they cannot all be shared.
  options.docStride = 64;
  EXPECT_THROW(buildSquadFeatures(data, tokenizer, 67, options), std::invalid_argument);
  options.docStride = 63;
  EXPECT_EQ(buildSquadFeatures(data, tokenizer, 67, options).features.size(), 1u);
  // A question cut to 64 tokens needs 64 + 3 special + 1 context = 68.
  options.docStride = 1;
  options.maxQueryLength = 64;
  EXPECT_THROW(buildSquadFeatures(data, tokenizer, 67, options), std::invalid_argument);
  EXPECT_EQ(buildSquadFeatures(data, tokenizer, 68, options).features.size(), 1u);
  options.maxQueryLength = 0;
  EXPECT_THROW(buildSquadFeatures(data, tokenizer, 68, options), std::invalid_argument);
}

TEST(SquadData, MismatchedAnswerTextIsCountedNotFatal) {
  ScratchDir dir;
  SquadDataset data = load(dir, towerFile(std::string("[{") + kWhere + R"(, "answers": [
      {"text": "Lyon", "answer_start": 23}]}])"));
  ASSERT_EQ(data.mismatchedAnswers.size(), 1u);
  EXPECT_EQ(data.mismatchedAnswers[0], dir.file("dev.json") +
                                           ": data[0].paragraphs[0].qas[0].answers[0]: text 'Lyon' "
                                           "differs from the context at answer_start 23: 'Pari'");
  EXPECT_EQ(data.examples[0].answers[0].span.end, 27u);
}

TEST(SquadData, MalformedFilesGiveLocatedErrors) {
  EXPECT_EQ(loadError(R"({"data": [)").rfind("dev.json: malformed JSON: parse error at line 1", 0),
            0u);
  EXPECT_EQ(loadError("{\"data\":\n  " + std::string(100000, '[') + std::string(100000, ']') + "}"),
            "dev.json:2:66: nesting deeper than 64 levels");
  EXPECT_EQ(loadError(R"({"data": [], "version": 1e400})")
                .rfind("dev.json:1:25: number 1e400 "
                       "is out of range",
                       0),
            0u);
  EXPECT_EQ(loadError("[1]"), "dev.json: must be an object, got array");
  EXPECT_EQ(loadError(R"({"version": "1.1"})"), "dev.json: missing key 'data'");
  EXPECT_EQ(loadError(R"({"data": {}})"), "dev.json: data: must be an array, got object");
  EXPECT_EQ(loadError(R"({"data": []})"), "dev.json: holds no question");
  EXPECT_EQ(loadError(R"({"data": [{"title": "x"}]})"),
            "dev.json: data[0]: missing key 'paragraphs'");
  EXPECT_EQ(loadError(R"({"data": [{"title": 7, "paragraphs": []}]})"),
            "dev.json: data[0].title: must be a string, got a number 7");
  EXPECT_EQ(loadError(R"({"data": [{"paragraphs": [{"context": 5, "qas": []}]}]})"),
            "dev.json: data[0].paragraphs[0].context: must be a string, got a number 5");
  EXPECT_EQ(loadError(towerFile(R"([{"id": "q1", "answers": []}])")),
            "dev.json: data[0].paragraphs[0].qas[0]: missing key 'question'");
  EXPECT_EQ(loadError(towerFile(std::string("[{") + kWhere + "}]")),
            "dev.json: data[0].paragraphs[0].qas[0]: missing key 'answers'");
  EXPECT_EQ(loadError(towerFile(std::string("[{") + kWhere + R"(, "answers": ["Paris"]}])")),
            "dev.json: data[0].paragraphs[0].qas[0].answers[0]: must be an object, got "
            "string");
  EXPECT_EQ(
      loadError(towerFile(std::string("[{") + kWhere + R"(, "answers": [{"answer_start": 23}]}])")),
      "dev.json: data[0].paragraphs[0].qas[0].answers[0]: missing key 'text'");
  EXPECT_EQ(loadError(towerFile(std::string("[{") + kWhere + R"(, "answers": [
                                {"text": "Paris", "answer_start": "23"}]}])")),
            "dev.json: data[0].paragraphs[0].qas[0].answers[0].answer_start: must be an "
            "integer, got string");
  EXPECT_EQ(loadError(towerFile(std::string("[{") + kWhere +
                                R"(, "answers": [{"text": "Paris", "answer_start": 2.5}]}])")),
            "dev.json: data[0].paragraphs[0].qas[0].answers[0].answer_start: must be an "
            "integer, got a number 2.5");
  EXPECT_EQ(loadError(towerFile(std::string("[{") + kWhere +
                                R"(, "answers": [], "is_impossible": "yes"}])")),
            "dev.json: data[0].paragraphs[0].qas[0].is_impossible: must be a boolean, got "
            "string");
}

TEST(SquadData, InconsistentAnswersGiveLocatedErrors) {
  // The bad answer sits in the second article's second paragraph's second question.
  std::string good = R"({"id": "q", "question": "Where?", "answers": [
      {"text": "Paris", "answer_start": 23}]})";
  auto file = [&](const std::string &badQuestion) {
    std::string paragraph = R"({"context": "The Eiffel Tower is in Paris.", "qas": [)";
    return R"({"data": [{"paragraphs": [)" + paragraph + good + R"(]}]}, {"paragraphs": [)" +
           paragraph + R"({"id": "r", "question": "?", "answers": []}, {"id": "s",
           "question": "?", "answers": [{"text": "x", "answer_start": 1}]}]},)" +
           paragraph +
           R"({"id": "t", "question": "?", "answers": [{"text": "x", "answer_start": 1}]},)" +
           badQuestion + "]}]}]}";
  };
  std::string at = "dev.json: data[1].paragraphs[1].qas[1]";
  // (the "r" question without answers fails first unless it is made impossible)
  EXPECT_EQ(loadError(file(R"({"id": "u", "question": "?", "answers": []})")),
            "dev.json: data[1].paragraphs[0].qas[0].answers: no answer, and is_impossible is "
            "not true");
  auto bad = [&](const std::string &question) {
    std::string text = file(question), unanswered = R"("answers": []})";
    text.replace(text.find(unanswered), unanswered.size(),
                 R"("answers": [], "is_impossible": true})");
    return loadError(text);
  };
  EXPECT_EQ(bad(R"({"id": "u", "question": "?",
                    "answers": [{"text": "x", "answer_start": 912}]})"),
            at + ".answers[0]: answer_start 912 is beyond the context (29 characters)");
  EXPECT_EQ(bad(R"({"id": "u", "question": "?",
                    "answers": [{"text": "x", "answer_start": -1}]})"),
            at + ".answers[0]: answer_start -1 is negative");
  EXPECT_EQ(bad(R"({"id": "u", "question": "?",
                    "answers": [{"text": "Paris. Oh", "answer_start": 23}]})"),
            at + ".answers[0]: the answer (9 characters from answer_start 23) runs past the "
                 "end of the context (29 characters)");
  EXPECT_EQ(bad(R"({"id": "u", "question": "?",
                    "answers": [{"text": "", "answer_start": 1}]})"),
            at + ".answers[0].text: the answer text is empty");
  EXPECT_EQ(bad(R"({"id": "u", "question": "?", "answers": [], "is_impossible": false})"),
            at + ".answers: no answer, and is_impossible is not true");
  EXPECT_EQ(bad(R"({"id": "u", "question": "?", "is_impossible": true,
                    "answers": [{"text": "x", "answer_start": 1}]})"),
            at + ".answers: an impossible question (is_impossible) has answers");
  EXPECT_EQ(bad(R"({"id": "q", "question": "?",
                    "answers": [{"text": "x", "answer_start": 1}]})"),
            at + ".id: id 'q' is used twice (first at data[0].paragraphs[0].qas[0])");
}

TEST(SquadData, MissingFileIsNamed) {
  ScratchDir dir;
  EXPECT_EQ(errorOf([&] { loadSquadDataset(dir.file("none.json")); }),
            dir.file("none.json") + ": cannot open: No such file or directory");
}

} // namespace
} // namespace bertc::squad_test

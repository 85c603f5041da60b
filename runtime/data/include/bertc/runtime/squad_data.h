// SQuAD v1.1 / v2.0 question answering data: the JSON reader, whose errors name the file and
// the JSON path, and the model features of Hugging Face's run_qa.py ([CLS] question [SEP]
// context window [SEP], consecutive windows sharing doc_stride tokens) with answer token
// positions and the byte spans that map a predicted token span back to the context.
#pragma once

#include "bertc/runtime/tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bertc {

/// A SQuAD file that cannot be used; what() reads "FILE: JSON.PATH: message", e.g.
/// "dev.json: data[3].paragraphs[0].qas[2].answers[0]: answer_start 912 is beyond the
/// context (640 characters)".
class SquadError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Bytes [begin, end) of a UTF-8 string.
struct ByteSpan {
  size_t begin;
  size_t end;
};

/// A paragraph: the context its questions are asked about.
struct SquadParagraph {
  std::string title;   ///< its article's title ("" when the file has none)
  std::string context; ///< UTF-8
};

/// A reference answer. answer_start counts code points, as in the official files; `span`
/// is the same place in bytes, as long as `text` is (in code points).
struct SquadAnswer {
  std::string text;
  int64_t answerStart;
  ByteSpan span;
};

/// A question about one paragraph.
struct SquadExample {
  std::string id;
  std::string question;
  size_t paragraph;                 ///< index into SquadDataset::paragraphs
  bool isImpossible;                ///< v2.0: the context holds no answer
  std::vector<SquadAnswer> answers; ///< empty exactly when isImpossible
};

/// A loaded SQuAD file.
struct SquadDataset {
  std::string path;
  std::vector<SquadParagraph> paragraphs;
  std::vector<SquadExample> examples; ///< in file order
  /// One "FILE: JSON.PATH: ..." line per answer whose text is not the context's text at
  /// answer_start. Such answers are kept, located by answer_start and the length of their
  /// text, as HF's run_qa does; callers should report how many there are.
  std::vector<std::string> mismatchedAnswers;
};

/// Reads a SQuAD v1.1 or v2.0 file: {"data": [{"title", "paragraphs": [{"context", "qas":
/// [{"id", "question", "answers": [{"text", "answer_start"}], "is_impossible"?}]}]}]}.
/// Throws SquadError naming the file and JSON path for malformed JSON, a missing key, a
/// value of the wrong type, an id used twice, an answer outside the context, an empty answer
/// text, answers on an impossible question and no answer on a possible one; naming the file
/// when it cannot be read or holds no question.
SquadDataset loadSquadDataset(const std::string &path);

/// The SQuAD recipe's settings, as run_qa.py's flags of the same names and defaults (the
/// [data] keys doc_stride, max_query_length, max_answer_length and n_best).
struct SquadOptions {
  size_t docStride = 128;               ///< context tokens consecutive windows share
  std::optional<size_t> maxQueryLength; ///< question tokens kept; unset: all (run_qa.py)
  size_t maxAnswerLength = 30;          ///< tokens of a predicted answer at most
  size_t nBest = 20;                    ///< ranked answers per question in nbest_predictions.json
};

/// One window of one question's context: [CLS] question [SEP] context tokens [SEP].
struct SquadFeature {
  size_t example;                    ///< index into SquadDataset::examples
  size_t window;                     ///< 0-based among the windows of that example
  std::vector<int32_t> inputIds;     ///< unpadded, at most maxSeqLen
  std::vector<int32_t> tokenTypeIds; ///< 0 up to the first [SEP], 1 after
  size_t contextStart;               ///< position in inputIds of the window's first context token
  size_t firstContextToken;          ///< that token's index among its paragraph's context tokens
  /// Positions in inputIds of the first and last token of the example's first answer, or
  /// 0 ([CLS]) for both when the question is impossible or the answer is not wholly inside
  /// this window.
  int32_t startPosition;
  int32_t endPosition;

  /// Context tokens in this window.
  size_t contextTokens() const { return inputIds.size() - contextStart - 1; }
};

/// Features of a dataset, and the byte spans of each paragraph's context tokens they share.
struct SquadFeatures {
  std::vector<SquadFeature> features; ///< example by example, windows in order
  /// [paragraph][context token]: where the token lies in the paragraph's context.
  std::vector<std::vector<ByteSpan>> contextTokenSpans;
};

/// Builds the features of every example, `maxSeqLen` tokens at most, as run_qa.py's
/// tokenizer call does (truncation="only_second", stride=doc_stride,
/// return_overflowing_tokens):
///  1. the question's tokens, cut to maxQueryLength when it is set;
///  2. room = maxSeqLen - question tokens - 3. A context of at most room tokens is one
///     window (a context without tokens too, empty); a longer one is cut into windows of
///     room tokens starting 0, room - docStride, 2 (room - docStride), ..., the last one
///     the first that reaches the context's end (the tokenizers library's
///     Encoding::truncate), so consecutive windows share docStride tokens;
///  3. the answer's positions in each window: the last token starting at or before the
///     answer's first byte and the first token from there ending at or after its last,
///     when the window holds the whole answer (run_qa.py's rule), else [CLS]. Where the
///     answer starts in the window's last token, that token is its start; run_qa.py's
///     start scan walks past it there, to the last position of the padded row.
/// Throws SquadError "FILE: question 'ID': ..." for a question that leaves no room for
/// context (its context not empty), or whose context needs windows when docStride is not
/// less than room (Hugging Face refuses both). Throws std::invalid_argument when
/// maxSeqLen < 4, docStride >= maxSeqLen - 3 or maxQueryLength is 0 or leaves no room.
/// TokenizerError cannot occur (the JSON was UTF-8).
SquadFeatures buildSquadFeatures(const SquadDataset &data, const Tokenizer &tokenizer,
                                 size_t maxSeqLen, const SquadOptions &options = {});

/// The context text covered by positions startToken..endToken (inclusive) of
/// features.features[feature], from the start of the first token to the end of the last:
/// the predicted answer. nullopt when either position is outside the window's context
/// tokens or endToken < startToken.
std::optional<std::string_view> predictedAnswerText(const SquadDataset &data,
                                                    const SquadFeatures &features, size_t feature,
                                                    size_t startToken, size_t endToken);

} // namespace bertc

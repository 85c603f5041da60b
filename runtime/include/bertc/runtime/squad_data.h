// SQuAD v1.1 / v2.0 question answering data: the JSON reader, whose errors name the file and
// the JSON path, and the model features of Hugging Face's run_squad ([CLS] question [SEP]
// context window [SEP], windows docStride tokens apart) with answer token positions and the
// byte spans that map a predicted token span back to the context.
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

/// Shape of the features, as run_squad's flags of the same names.
struct SquadFeatureOptions {
  size_t maxSeqLen = 384;     ///< tokens per feature, [CLS] and both [SEP] included
  size_t maxQueryLength = 64; ///< question tokens kept (the rest are cut)
  size_t docStride = 128;     ///< tokens between the starts of consecutive windows (HF
                              ///< run_qa.py's `stride` is their overlap instead)
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

/// Builds the features of every example as run_squad does:
///  1. the question's tokens, cut to maxQueryLength;
///  2. windows over the context's tokens, each as long as maxSeqLen allows, starting
///     docStride tokens after the previous one, until one reaches the end of the context
///     (a context without tokens still gets one, empty, window);
///  3. the answer's positions in each window: the last token starting at or before the
///     answer's first byte and the first token from there ending at or after its last,
///     when the window holds the whole answer (HF run_qa's rule), else [CLS].
/// Throws std::invalid_argument when docStride is 0 or maxSeqLen < maxQueryLength + 4 (a
/// window must hold a context token); TokenizerError cannot occur (the JSON was UTF-8).
SquadFeatures buildSquadFeatures(const SquadDataset &data, const Tokenizer &tokenizer,
                                 const SquadFeatureOptions &options = {});

/// The context text covered by positions startToken..endToken (inclusive) of
/// features.features[feature], from the start of the first token to the end of the last:
/// the predicted answer. nullopt when either position is outside the window's context
/// tokens or endToken < startToken.
std::optional<std::string_view> predictedAnswerText(const SquadDataset &data,
                                                    const SquadFeatures &features, size_t feature,
                                                    size_t startToken, size_t endToken);

} // namespace bertc

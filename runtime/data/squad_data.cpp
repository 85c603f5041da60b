// SQuAD JSON reading, every check located by file and JSON path, and run_qa.py's windowed
// features. Contexts are tokenized once per paragraph; features share the byte spans of a
// paragraph's context tokens instead of copying them per window.
#include "bertc/runtime/squad_data.h"

#include "bertc/runtime/input_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_map>

namespace bertc {
namespace {

using Json = nlohmann::json;

/// The JSON types a SQuAD file holds.
enum class Kind { kObject, kArray, kString, kInteger, kBoolean };

bool hasKind(const Json &value, Kind kind) {
  switch (kind) {
  case Kind::kObject:
    return value.is_object();
  case Kind::kArray:
    return value.is_array();
  case Kind::kString:
    return value.is_string();
  case Kind::kInteger:
    return value.is_number_integer();
  case Kind::kBoolean:
    return value.is_boolean();
  }
  return false;
}

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::kObject:
    return "an object";
  case Kind::kArray:
    return "an array";
  case Kind::kString:
    return "a string";
  case Kind::kInteger:
    return "an integer";
  case Kind::kBoolean:
    return "a boolean";
  }
  return "";
}

/// Reads the values of one file, throwing SquadError at JSON paths ("data[3].paragraphs").
class Reader {
public:
  explicit Reader(const std::string &path) : path_(path) {}

  SquadError error(const std::string &where, const std::string &message) const {
    return SquadError(path_ + ": " + (where.empty() ? "" : where + ": ") + message);
  }

  /// `value` (found at `where`), which must be of `kind`.
  const Json &expect(const Json &value, const std::string &where, Kind kind) const {
    if (!hasKind(value, kind))
      throw error(where, std::string("must be ") + kindName(kind) + ", got " +
                             (value.is_number() ? "a number " + value.dump()
                                                : std::string(value.type_name())));
    return value;
  }

  /// Member `key` of the object at `where`, which must be of `kind`.
  const Json &member(const Json &object, const std::string &where, const char *key,
                     Kind kind) const {
    if (!object.contains(key))
      throw error(where, std::string("missing key '") + key + "'");
    return expect(object[key], child(where, key), kind);
  }

  static std::string child(const std::string &where, const char *key) {
    return where.empty() ? key : where + "." + key;
  }
  static std::string element(const std::string &where, size_t index) {
    return where + "[" + std::to_string(index) + "]";
  }

private:
  const std::string &path_;
};

/// Byte offset of each code point of UTF-8 `text`, then text.size().
std::vector<size_t> codePointStarts(const std::string &text) {
  std::vector<size_t> starts;
  for (size_t at = 0; at < text.size(); ++at)
    if ((uint8_t(text[at]) & 0xC0) != 0x80)
      starts.push_back(at);
  starts.push_back(text.size());
  return starts;
}

/// Reads one answer (found at `where`) of a question about `context`, whose code points
/// start at the bytes `charStarts`; a text that differs from the context there is noted in
/// data.mismatchedAnswers.
SquadAnswer readAnswer(const Reader &reader, const Json &json, const std::string &where,
                       const std::string &context, const std::vector<size_t> &charStarts,
                       SquadDataset &data) {
  reader.expect(json, where, Kind::kObject);
  SquadAnswer answer;
  answer.text = reader.member(json, where, "text", Kind::kString).get<std::string>();
  const Json &start = reader.member(json, where, "answer_start", Kind::kInteger);
  bool huge = start.is_number_unsigned() && start.get<uint64_t>() > uint64_t(INT64_MAX);
  answer.answerStart = huge ? INT64_MAX : start.get<int64_t>();
  if (answer.text.empty())
    throw reader.error(Reader::child(where, "text"), "the answer text is empty");
  int64_t contextChars = int64_t(charStarts.size()) - 1;
  std::string contextSize = "(" + std::to_string(contextChars) + " characters)";
  if (answer.answerStart < 0)
    throw reader.error(where,
                       "answer_start " + std::to_string(answer.answerStart) + " is negative");
  if (answer.answerStart >= contextChars)
    throw reader.error(where, "answer_start " + std::to_string(answer.answerStart) +
                                  " is beyond the context " + contextSize);
  int64_t textChars = int64_t(codePointStarts(answer.text).size()) - 1;
  if (answer.answerStart + textChars > contextChars)
    throw reader.error(where, "the answer (" + std::to_string(textChars) +
                                  " characters from answer_start " +
                                  std::to_string(answer.answerStart) +
                                  ") runs past the end of the context " + contextSize);
  answer.span = {charStarts[size_t(answer.answerStart)],
                 charStarts[size_t(answer.answerStart + textChars)]};
  std::string_view found(context.data() + answer.span.begin, answer.span.end - answer.span.begin);
  if (found != answer.text)
    data.mismatchedAnswers.push_back(data.path + ": " + where + ": text '" + answer.text +
                                     "' differs from the context at answer_start " +
                                     std::to_string(answer.answerStart) + ": '" +
                                     std::string(found) + "'");
  return answer;
}

/// Reads the questions of the paragraph data.paragraphs.back() (found at `where`).
void readQuestions(const Reader &reader, const Json &qas, const std::string &where,
                   std::unordered_map<std::string, std::string> &idLocations, SquadDataset &data) {
  size_t paragraph = data.paragraphs.size() - 1;
  const std::string &context = data.paragraphs.back().context;
  std::vector<size_t> charStarts = codePointStarts(context);
  for (size_t q = 0; q < qas.size(); ++q) {
    std::string at = Reader::element(where, q);
    reader.expect(qas[q], at, Kind::kObject);
    SquadExample example{{}, {}, paragraph, false, {}};
    example.id = reader.member(qas[q], at, "id", Kind::kString).get<std::string>();
    example.question = reader.member(qas[q], at, "question", Kind::kString).get<std::string>();
    if (qas[q].contains("is_impossible"))
      example.isImpossible =
          reader.expect(qas[q]["is_impossible"], Reader::child(at, "is_impossible"), Kind::kBoolean)
              .get<bool>();
    auto [first, added] = idLocations.emplace(example.id, at);
    if (!added)
      throw reader.error(Reader::child(at, "id"),
                         "id '" + example.id + "' is used twice (first at " + first->second + ")");
    std::string answersAt = Reader::child(at, "answers");
    const Json &answers = reader.member(qas[q], at, "answers", Kind::kArray);
    if (example.isImpossible && !answers.empty())
      throw reader.error(answersAt, "an impossible question (is_impossible) has answers");
    if (!example.isImpossible && answers.empty())
      throw reader.error(answersAt, "no answer, and is_impossible is not true");
    for (size_t a = 0; a < answers.size(); ++a)
      example.answers.push_back(
          readAnswer(reader, answers[a], Reader::element(answersAt, a), context, charStarts, data));
    data.examples.push_back(std::move(example));
  }
}

/// Sets the answer positions of `feature`, whose window holds `length` tokens of the
/// context tokens `spans`, when the window holds all of `answer` (see buildSquadFeatures).
void labelAnswer(ByteSpan answer, const std::vector<ByteSpan> &spans, SquadFeature &feature,
                 size_t length) {
  size_t first = feature.firstContextToken, last = first + length - 1;
  if (length == 0 || spans[first].begin > answer.begin || spans[last].end < answer.end)
    return;
  size_t answerFirst = first;
  while (answerFirst < last && spans[answerFirst + 1].begin <= answer.begin)
    ++answerFirst;
  size_t answerLast = answerFirst;
  while (spans[answerLast].end < answer.end)
    ++answerLast;
  feature.startPosition = int32_t(feature.contextStart + answerFirst - first);
  feature.endPosition = int32_t(feature.contextStart + answerLast - first);
}

/// The first context token of each window of a context `total` tokens long, windows of
/// `room` tokens sharing `stride` (see buildSquadFeatures): one window when it fits.
std::vector<size_t> windowStarts(size_t total, size_t room, size_t stride) {
  std::vector<size_t> starts = {0};
  while (starts.back() + room < total)
    starts.push_back(starts.back() + room - stride);
  return starts;
}

} // namespace

SquadDataset loadSquadDataset(const std::string &path) {
  Json root = parseJsonFile<SquadError>(readWholeFile<SquadError>(path, kDataFileLimit), path);

  Reader reader(path);
  SquadDataset data{path, {}, {}, {}};
  std::unordered_map<std::string, std::string> idLocations; // id -> JSON path of its question
  reader.expect(root, "", Kind::kObject);
  const Json &articles = reader.member(root, "", "data", Kind::kArray);
  for (size_t a = 0; a < articles.size(); ++a) {
    std::string at = Reader::element("data", a);
    reader.expect(articles[a], at, Kind::kObject);
    std::string title;
    if (articles[a].contains("title"))
      title = reader.expect(articles[a]["title"], Reader::child(at, "title"), Kind::kString)
                  .get<std::string>();
    std::string paragraphsAt = Reader::child(at, "paragraphs");
    const Json &paragraphs = reader.member(articles[a], at, "paragraphs", Kind::kArray);
    for (size_t p = 0; p < paragraphs.size(); ++p) {
      std::string paragraphAt = Reader::element(paragraphsAt, p);
      reader.expect(paragraphs[p], paragraphAt, Kind::kObject);
      const Json &context = reader.member(paragraphs[p], paragraphAt, "context", Kind::kString);
      const Json &qas = reader.member(paragraphs[p], paragraphAt, "qas", Kind::kArray);
      data.paragraphs.push_back({title, context.get<std::string>()});
      readQuestions(reader, qas, Reader::child(paragraphAt, "qas"), idLocations, data);
    }
  }
  if (data.examples.empty())
    throw SquadError(path + ": holds no question");
  return data;
}

SquadFeatures buildSquadFeatures(const SquadDataset &data, const Tokenizer &tokenizer,
                                 size_t maxSeqLen, const SquadOptions &options) {
  if (maxSeqLen < 4)
    throw std::invalid_argument("SQuAD features: a sequence of " + std::to_string(maxSeqLen) +
                                " tokens cannot hold [CLS], two [SEP] and some context");
  if (options.docStride >= maxSeqLen - 3)
    throw std::invalid_argument("SQuAD features: doc stride " + std::to_string(options.docStride) +
                                " must be less than the " + std::to_string(maxSeqLen - 3) +
                                " context tokens a window can hold");
  if (options.maxQueryLength &&
      (*options.maxQueryLength == 0 || *options.maxQueryLength + 4 > maxSeqLen))
    throw std::invalid_argument("SQuAD features: max query length " +
                                std::to_string(*options.maxQueryLength) +
                                " must be at least 1 and leave a sequence of " +
                                std::to_string(maxSeqLen) + " tokens room for context");
  SquadFeatures out;
  out.contextTokenSpans.resize(data.paragraphs.size());
  std::vector<int32_t> contextIds; // of the paragraph of the previous example
  size_t tokenizedParagraph = SIZE_MAX;
  for (size_t e = 0; e < data.examples.size(); ++e) {
    const SquadExample &example = data.examples[e];
    std::vector<ByteSpan> &spans = out.contextTokenSpans[example.paragraph];
    if (example.paragraph != tokenizedParagraph) {
      tokenizedParagraph = example.paragraph;
      contextIds.clear();
      spans.clear();
      const std::string &context = data.paragraphs[example.paragraph].context;
      for (const Token &token : tokenizer.tokenize(context)) {
        contextIds.push_back(token.id);
        spans.push_back({token.begin, token.end});
      }
    }
    std::vector<Token> question = tokenizer.tokenize(example.question);
    question.resize(std::min(question.size(), options.maxQueryLength.value_or(SIZE_MAX)), Token{});
    auto fail = [&](const std::string &message) {
      return SquadError(data.path + ": question '" + example.id + "': " + message);
    };
    size_t contextStart = question.size() + 2;
    bool fits = contextStart + contextIds.size() + 1 <= maxSeqLen;
    if (!fits && contextStart + 1 >= maxSeqLen)
      throw fail("its " + std::to_string(question.size()) +
                 " tokens leave no room for context in a sequence of " + std::to_string(maxSeqLen) +
                 " tokens ([CLS] question [SEP] context [SEP]); set [data] max_query_length to "
                 "cut questions");
    size_t room = fits ? contextIds.size() : maxSeqLen - contextStart - 1;
    if (!fits && options.docStride >= room)
      throw fail("its context (" + std::to_string(contextIds.size()) +
                 " tokens) needs windows, which hold " + std::to_string(room) +
                 " tokens beside its " + std::to_string(question.size()) +
                 " question tokens: [data] doc_stride " + std::to_string(options.docStride) +
                 " must be less than that (or set max_query_length)");

    std::vector<size_t> starts = windowStarts(contextIds.size(), room, options.docStride);
    for (size_t window = 0; window < starts.size(); ++window) {
      size_t start = starts[window], length = std::min(contextIds.size() - start, room);
      SquadFeature feature{e, window, {}, {}, contextStart, start, 0, 0};
      feature.inputIds.push_back(tokenizer.clsId());
      for (const Token &token : question)
        feature.inputIds.push_back(token.id);
      feature.inputIds.push_back(tokenizer.sepId());
      feature.inputIds.insert(feature.inputIds.end(), contextIds.begin() + start,
                              contextIds.begin() + start + length);
      feature.inputIds.push_back(tokenizer.sepId());
      feature.tokenTypeIds.assign(feature.inputIds.size(), 1);
      std::fill_n(feature.tokenTypeIds.begin(), contextStart, 0);

      if (!example.isImpossible)
        labelAnswer(example.answers.front().span, spans, feature, length);
      out.features.push_back(std::move(feature));
    }
  }
  return out;
}

std::optional<std::string_view> predictedAnswerText(const SquadDataset &data,
                                                    const SquadFeatures &features, size_t feature,
                                                    size_t startToken, size_t endToken) {
  const SquadFeature &f = features.features[feature];
  if (startToken < f.contextStart || endToken < startToken ||
      endToken >= f.contextStart + f.contextTokens())
    return std::nullopt;
  const SquadExample &example = data.examples[f.example];
  const std::vector<ByteSpan> &spans = features.contextTokenSpans[example.paragraph];
  size_t begin = spans[f.firstContextToken + startToken - f.contextStart].begin;
  size_t end = spans[f.firstContextToken + endToken - f.contextStart].end;
  return std::string_view(data.paragraphs[example.paragraph].context)
      .substr(begin, std::max(end, begin) - begin);
}

} // namespace bertc

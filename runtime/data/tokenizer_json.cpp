// tokenizer.json's fields, each checked against what HfTokenizer supports. A field holding
// anything else is an error naming it (JSON path from the root, "pre_tokenizer.
// pretokenizers[0].pattern.Regex"), never a silent fallback that would give other ids than
// the tokenizers library.
#include "bertc/runtime/tokenizer_json.h"

#include "bertc/runtime/input_files.h"

#include <nlohmann/json.hpp>

namespace bertc {
namespace {

using Json = nlohmann::json;

/// tokenizer.json files of large vocabularies run to about 10 MiB (Qwen's is 11).
constexpr FileLimit kTokenizerJsonLimit{uint64_t(64) << 20, "a tokenizer.json"};

/// Reads fields of one file; every error names the file and the field.
class FieldReader {
public:
  explicit FieldReader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string &field, const std::string &message) const {
    throw TokenizerError(path_ + ": " + field + ": " + message);
  }
  [[noreturn]] void unsupported(const std::string &field, const Json &value,
                                const std::string &supported) const {
    fail(field, value.dump() + " is not supported (" + supported + ")");
  }

  /// object[key] (null when absent); `where` is the object's field name.
  const Json &at(const Json &object, const std::string &where, const char *key) const {
    static const Json null;
    if (!object.is_object())
      fail(where, std::string("must be an object, got ") + object.type_name());
    auto found = object.find(key);
    return found == object.end() ? null : *found;
  }
  static std::string join(const std::string &where, const char *key) {
    return where.empty() ? key : where + "." + key;
  }

  std::string string(const Json &object, const std::string &where, const char *key) const {
    const Json &value = at(object, where, key);
    if (!value.is_string())
      fail(join(where, key), std::string("must be a string, got ") + value.type_name());
    return value.get<std::string>();
  }
  bool flag(const Json &object, const std::string &where, const char *key,
            bool absent = false) const {
    const Json &value = at(object, where, key);
    if (value.is_null())
      return absent;
    if (!value.is_boolean())
      fail(join(where, key), std::string("must be true or false, got ") + value.type_name());
    return value.get<bool>();
  }
  int32_t id(const Json &value, const std::string &field) const {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > INT32_MAX)
      fail(field, "must be an id (an integer from 0 to 2^31 - 1), got " + value.dump());
    return int32_t(value.get<int64_t>());
  }
  const Json &array(const Json &object, const std::string &where, const char *key) const {
    const Json &value = at(object, where, key);
    if (!value.is_array())
      fail(join(where, key), std::string("must be an array, got ") + value.type_name());
    return value;
  }
  /// Fails unless object[key] is `expected` (or absent when `expected` may be).
  void expect(const Json &object, const std::string &where, const char *key, const Json &expected,
              bool absentOk = true) const {
    const Json &value = at(object, where, key);
    if (!(value == expected || (absentOk && value.is_null())))
      unsupported(join(where, key), value, "bertc supports " + expected.dump());
  }

private:
  std::string path_;
};

std::string typeOf(const FieldReader &reader, const Json &object, const std::string &where) {
  return reader.string(object, where, "type");
}

const std::string kMetaspace = "\xE2\x96\x81"; // ▁

BpeModel readModel(const FieldReader &reader, const Json &root) {
  const Json &model = reader.at(root, "", "model");
  if (std::string type = typeOf(reader, model, "model"); type != "BPE")
    reader.unsupported("model.type", type, "BPE is");
  reader.expect(model, "model", "dropout", nullptr);
  for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const Json &affix = reader.at(model, "model", key); !affix.is_null() && affix != "")
      reader.unsupported(FieldReader::join("model", key), affix, "only none is");

  const Json &vocabJson = reader.at(model, "model", "vocab");
  if (!vocabJson.is_object())
    reader.fail("model.vocab", std::string("must be an object, got ") + vocabJson.type_name());
  std::unordered_map<std::string, int32_t> vocab;
  for (const auto &[token, id] : vocabJson.items())
    vocab[token] = reader.id(id, "model.vocab[" + Json(token).dump() + "]");
  auto idOf = [&](const std::string &token, const std::string &field) {
    auto found = vocab.find(token);
    if (found == vocab.end())
      reader.fail(field, Json(token).dump() + " is not in model.vocab");
    return found->second;
  };

  std::vector<BpeMerge> merges;
  const Json &mergesJson = reader.array(model, "model", "merges");
  merges.reserve(mergesJson.size());
  for (size_t i = 0; i < mergesJson.size(); ++i) {
    const Json &merge = mergesJson[i];
    std::string field = "model.merges[" + std::to_string(i) + "]";
    std::string left, right;
    if (merge.is_string()) {
      // "left right": exactly one space, as the library splits it.
      std::string text = merge.get<std::string>();
      size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos)
        reader.fail(field, merge.dump() + " must be two tokens separated by one space");
      left = text.substr(0, space);
      right = text.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      left = merge[0].get<std::string>();
      right = merge[1].get<std::string>();
    } else {
      reader.fail(field, "must be \"left right\" or [left, right], got " + merge.dump());
    }
    merges.push_back({idOf(left, field), idOf(right, field), idOf(left + right, field)});
  }

  BpeOptions options;
  if (const Json &unk = reader.at(model, "model", "unk_token"); !unk.is_null())
    options.unkId = idOf(reader.string(model, "model", "unk_token"), "model.unk_token");
  options.byteFallback = reader.flag(model, "model", "byte_fallback");
  options.fuseUnk = reader.flag(model, "model", "fuse_unk");
  options.ignoreMerges = reader.flag(model, "model", "ignore_merges");
  return BpeModel(std::move(vocab), merges, options);
}

void readAddedTokens(const FieldReader &reader, const Json &root, HfTokenizerSpec &spec) {
  const Json &added = reader.at(root, "", "added_tokens");
  if (added.is_null())
    return;
  if (!added.is_array())
    reader.fail("added_tokens", std::string("must be an array, got ") + added.type_name());
  for (size_t i = 0; i < added.size(); ++i) {
    std::string where = "added_tokens[" + std::to_string(i) + "]";
    const Json &token = added[i];
    for (const char *key : {"single_word", "lstrip", "rstrip"})
      reader.expect(token, where, key, false);
    // A normalized token is matched in the normalized text; without a normalizer that is
    // the text itself.
    if (reader.flag(token, where, "normalized") &&
        spec.normalizer != HfTokenizerSpec::Normalizer::kNone)
      reader.unsupported(where + ".normalized", true, "only false is, with a normalizer");
    spec.addedTokens.push_back({reader.string(token, where, "content"),
                                reader.id(reader.at(token, where, "id"), where + ".id"),
                                reader.flag(token, where, "special")});
  }
}

HfTokenizerSpec::Normalizer readNormalizer(const FieldReader &reader, const Json &root) {
  const Json &normalizer = reader.at(root, "", "normalizer");
  if (normalizer.is_null())
    return HfTokenizerSpec::Normalizer::kNone;
  std::string type = typeOf(reader, normalizer, "normalizer");
  if (type == "NFC")
    return HfTokenizerSpec::Normalizer::kNfc;
  const Json prependReplace = Json::parse(R"([{"type": "Prepend", "prepend": "▁"},
      {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}])");
  if (type == "Sequence" && reader.at(normalizer, "normalizer", "normalizers") == prependReplace)
    return HfTokenizerSpec::Normalizer::kPrependReplace;
  reader.unsupported("normalizer", normalizer,
                     "bertc supports null, NFC, and the Sequence of Prepend \"▁\" and Replace "
                     "\" \" with \"▁\"");
}

/// A ByteLevel pre-tokenizer; `splitBefore` says whether a Split precedes it.
void readByteLevel(const FieldReader &reader, const Json &byteLevel, const std::string &where,
                   bool splitBefore, HfTokenizerSpec &spec) {
  spec.byteLevel = true;
  spec.addPrefixSpace = reader.flag(byteLevel, where, "add_prefix_space");
  if (reader.flag(byteLevel, where, "use_regex", true)) {
    if (splitBefore)
      reader.unsupported(where + ".use_regex", true, "only false is after a Split");
    spec.split = SplitPattern::kGpt2;
  }
}

void readPreTokenizer(const FieldReader &reader, const Json &root, HfTokenizerSpec &spec) {
  const Json &pre = reader.at(root, "", "pre_tokenizer");
  if (pre.is_null())
    return;
  std::string type = typeOf(reader, pre, "pre_tokenizer");
  if (type == "ByteLevel")
    return readByteLevel(reader, pre, "pre_tokenizer", false, spec);
  const std::string supported = "bertc supports null, ByteLevel, and the Sequence of a Split "
                                "and ByteLevel";
  if (type != "Sequence")
    reader.unsupported("pre_tokenizer.type", type, supported);
  const Json &steps = reader.array(pre, "pre_tokenizer", "pretokenizers");
  if (steps.size() != 2)
    reader.unsupported("pre_tokenizer.pretokenizers", steps, supported);
  const std::string split = "pre_tokenizer.pretokenizers[0]";
  if (typeOf(reader, steps[0], split) != "Split")
    reader.unsupported(split + ".type", steps[0]["type"], "Split is");
  reader.expect(steps[0], split, "behavior", "Isolated", false);
  reader.expect(steps[0], split, "invert", false);
  const Json &pattern = reader.at(steps[0], split, "pattern");
  std::string regex = reader.string(pattern, split + ".pattern", "Regex");
  spec.split = recognizeSplitPattern(regex);
  if (!spec.split)
    reader.unsupported(split + ".pattern.Regex", regex,
                       "bertc knows the patterns of GPT-2, Llama-3 and Qwen2");
  const std::string byteLevel = "pre_tokenizer.pretokenizers[1]";
  if (typeOf(reader, steps[1], byteLevel) != "ByteLevel")
    reader.unsupported(byteLevel + ".type", steps[1]["type"], "ByteLevel is");
  readByteLevel(reader, steps[1], byteLevel, true, spec);
}

/// One post-processor (not a Sequence): appends its template to `single`.
void readProcessor(const FieldReader &reader, const Json &processor, const std::string &where,
                   std::vector<int32_t> &single) {
  std::string type = typeOf(reader, processor, where);
  if (type == "ByteLevel") {
    // Trimming offsets moves them off the white space byte-level tokens carry.
    reader.expect(processor, where, "trim_offsets", false);
    return;
  }
  if (type != "TemplateProcessing")
    reader.unsupported(where + ".type", type, "ByteLevel, TemplateProcessing and Sequence are");
  const Json &specials = reader.at(processor, where, "special_tokens");
  std::vector<int32_t> templated;
  const Json &items = reader.array(processor, where, "single");
  for (size_t i = 0; i < items.size(); ++i) {
    std::string item = where + ".single[" + std::to_string(i) + "]";
    if (const Json &sequence = reader.at(items[i], item, "Sequence"); !sequence.is_null()) {
      reader.expect(sequence, item + ".Sequence", "id", "A", false);
      templated.push_back(-1);
      continue;
    }
    const Json &special = reader.at(items[i], item, "SpecialToken");
    std::string name = reader.string(special, item + ".SpecialToken", "id");
    const Json &entry = reader.at(specials, where + ".special_tokens", name.c_str());
    if (entry.is_null())
      reader.fail(item, Json(name).dump() + " is not in " + where + ".special_tokens");
    const Json &ids = reader.array(entry, where + ".special_tokens." + name, "ids");
    for (size_t k = 0; k < ids.size(); ++k)
      templated.push_back(
          reader.id(ids[k], where + ".special_tokens." + name + ".ids[" + std::to_string(k) + "]"));
  }
  // Each template takes the text the previous one gave.
  std::vector<int32_t> combined;
  for (int32_t id : templated) {
    if (id >= 0)
      combined.push_back(id);
    else
      combined.insert(combined.end(), single.begin(), single.end());
  }
  single = combined;
}

void readPostProcessor(const FieldReader &reader, const Json &root, HfTokenizerSpec &spec) {
  const Json &post = reader.at(root, "", "post_processor");
  if (post.is_null())
    return;
  if (typeOf(reader, post, "post_processor") != "Sequence")
    return readProcessor(reader, post, "post_processor", spec.singleTemplate);
  const Json &processors = reader.array(post, "post_processor", "processors");
  for (size_t i = 0; i < processors.size(); ++i)
    readProcessor(reader, processors[i], "post_processor.processors[" + std::to_string(i) + "]",
                  spec.singleTemplate);
}

HfTokenizerSpec::Decoder readDecoder(const FieldReader &reader, const Json &root) {
  const Json &decoder = reader.at(root, "", "decoder");
  if (decoder.is_null())
    return HfTokenizerSpec::Decoder::kNone;
  std::string type = typeOf(reader, decoder, "decoder");
  if (type == "ByteLevel")
    return HfTokenizerSpec::Decoder::kByteLevel;
  const Json sentencePiece = Json::parse(R"([
      {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
      {"type": "ByteFallback"}, {"type": "Fuse"},
      {"type": "Strip", "content": " ", "start": 1, "stop": 0}])");
  if (type == "Sequence" && reader.at(decoder, "decoder", "decoders") == sentencePiece)
    return HfTokenizerSpec::Decoder::kSentencePiece;
  reader.unsupported("decoder", decoder,
                     "bertc supports null, ByteLevel, and the Sequence of Replace \"▁\" with "
                     "\" \", ByteFallback, Fuse and Strip \" \" 1 0");
}

} // namespace

HfTokenizer parseHfTokenizer(std::string_view json, const std::string &path) {
  Json root = parseJsonFile<TokenizerError>(json, path);
  FieldReader reader(path);
  if (!root.is_object())
    throw TokenizerError(path + ": must be a JSON object, got " + root.type_name());
  for (const char *key : {"truncation", "padding"})
    reader.expect(root, "", key, nullptr);
  HfTokenizerSpec spec;
  spec.normalizer = readNormalizer(reader, root);
  readPreTokenizer(reader, root, spec);
  readAddedTokens(reader, root, spec);
  readPostProcessor(reader, root, spec);
  spec.decoder = readDecoder(reader, root);
  return HfTokenizer(std::move(spec), readModel(reader, root));
}

HfTokenizer loadHfTokenizer(const std::string &path) {
  return parseHfTokenizer(readWholeFile<TokenizerError>(path, kTokenizerJsonLimit), path);
}

} // namespace bertc

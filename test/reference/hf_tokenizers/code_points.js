// Hugging Face's tokenizers library (BertNormalizer, BertPreTokenizer and WordPiece, as
// BertTokenizerFast builds them) on "ab" + c + "cd" for every code point c, cased and
// uncased: the reference of test/tokenizer/every-code-point.test and of
// test/unit/runtime/hf_code_point_outcomes.inc.
//   node code_points.js vocab > VOCAB     a vocabulary in which a changed character shows
//   TOOL VOCAB | node code_points.js compare VOCAB
//                                         compares bertc's tokens (bertc_tokenize_code_points)
//   node code_points.js outcomes > test/unit/runtime/hf_code_point_outcomes.inc
//                                         what becomes of each c, as ranges
"use strict";
const readline = require("readline");
const hf = require("@anush008/tokenizers");

const kLastCodePoint = 0x10ffff;
const kBatch = 8192;
const isSurrogate = (cp) => cp >= 0xd800 && cp <= 0xdfff;
// Rust's char::is_whitespace (White_Space): the vocabulary reader trims it off a line's end.
const kWhiteSpace = /^[\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;

/// "ab" + c + "cd" for each code point c of `codePoints`.
const contexts = (codePoints) => codePoints.map((cp) => "ab" + String.fromCodePoint(cp) + "cd");

/// The code points [first, last], surrogates skipped.
function codePointRange(first, last) {
  const codePoints = [];
  for (let cp = first; cp <= last; ++cp) if (!isSurrogate(cp)) codePoints.push(cp);
  return codePoints;
}

/// BertTokenizerFast's pipeline over `model`; strip_accents follows lowercase, as it does
/// when tokenizer_config.json leaves it unset.
function bertTokenizer(model, lowercase) {
  const tokenizer = new hf.Tokenizer(model);
  const options = { cleanText: true, handleChineseChars: true, stripAccents: lowercase, lowercase };
  tokenizer.setNormalizer(hf.bertNormalizer(options));
  tokenizer.setPreTokenizer(hf.bertPreTokenizer());
  return tokenizer;
}

/// The cased and uncased tokenizers over the vocabulary file at `path`.
async function loadTokenizers(path) {
  const options = { unkToken: "[UNK]" };
  return [
    bertTokenizer(await hf.WordPiece.fromFile(path, options), false),
    bertTokenizer(await hf.WordPiece.fromFile(path, options), true),
  ];
}

/// Each encoding as "id@begin-end" per token (offsets in code points), space-joined.
async function tokenLines(tokenizer, codePoints) {
  const encodings = await tokenizer.encodeBatch(contexts(codePoints), { addSpecialTokens: false });
  return encodings.map((encoding) => {
    const offsets = encoding.getOffsets();
    return encoding.getIds().map((id, i) => `${id}@${offsets[i][0]}-${offsets[i][1]}`).join(" ");
  });
}

/// The specials, the context's two words, then every character of planes 0 to 2 (where all
/// that case mapping and canonical decomposition give lives) alone and as a continuation, so
/// that each character a normalized c holds is a token of its own. NUL and white space are
/// left out: the tokenizers library's vocabulary reader cannot keep them.
function writeVocab() {
  const lines = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ab", "cd", "##cd"];
  for (let cp = 1; cp <= 0x2ffff; ++cp) {
    const char = String.fromCodePoint(cp);
    if (!isSurrogate(cp) && !kWhiteSpace.test(char)) lines.push(char, "##" + char);
  }
  process.stdout.write(lines.join("\n") + "\n");
}

/// Reads bertc's lines (HEX \t CASED \t UNCASED, one per code point in order, surrogates
/// skipped) from stdin and prints the first that differ from the tokenizers library's and
/// how many differ in each setting; exits 1 on any difference.
async function compare(vocabPath) {
  const [cased, uncased] = await loadTokenizers(vocabPath);
  const expected = codePointRange(0, kLastCodePoint);
  let seen = 0, differ = 0, casedDiffer = 0, uncasedDiffer = 0;
  const check = async (lines) => {
    const ours = lines.map((line) => line.split("\t"));
    const codePoints = ours.map(([hex]) => parseInt(hex, 16));
    const [casedLines, uncasedLines] = await Promise.all(
      [cased, uncased].map((tokenizer) => tokenLines(tokenizer, codePoints)));
    ours.forEach(([hex, ourCased, ourUncased], i) => {
      if (codePoints[i] !== expected[seen++])
        throw new Error(`line ${seen}: U+${hex} out of order`);
      const casedSame = ourCased === casedLines[i], uncasedSame = ourUncased === uncasedLines[i];
      casedDiffer += !casedSame;
      uncasedDiffer += !uncasedSame;
      if ((!casedSame || !uncasedSame) && differ++ < 20)
        console.log(`U+${hex}: bertc ${ourCased} | ${ourUncased}; ` +
                    `tokenizers ${casedLines[i]} | ${uncasedLines[i]}`);
    });
  };
  let batch = [];
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of input) {
    batch.push(line);
    if (batch.length === kBatch) await check(batch.splice(0));
  }
  await check(batch);
  if (seen !== expected.length) throw new Error(`${seen} lines for ${expected.length} code points`);
  console.log(`${differ} of ${seen} code points differ ` +
              `(cased ${casedDiffer}, uncased ${uncasedDiffer})`);
  process.exitCode = differ ? 1 : 0;
}

/// What becomes of c in "ab" + c + "cd" with the vocabulary [UNK] ab cd ##cd, as the
/// tokens show it: Gone ([ab ##cd]: dropped, or a mark stripped), Split ([ab cd]: white
/// space), Isolated ([ab c cd]: punctuation, a CJK ideograph) or InWord ([UNK] over it all).
function outcome(encoding) {
  const tokens = encoding.getIds().map((id, i) => `${id}@${encoding.getOffsets()[i].join("-")}`);
  const name = {
    "1@0-2 3@3-5": "Gone",
    "1@0-2 2@3-5": "Split",
    "1@0-2 0@2-3 2@3-5": "Isolated",
    "0@0-5": "InWord",
  };
  const found = name[tokens.join(" ")];
  if (!found) throw new Error(`unexpected tokens ${tokens.join(" ")}`);
  return found;
}

/// Prints test/unit/runtime/hf_code_point_outcomes.inc: the ranges {first, last, cased,
/// uncased} of equal outcomes, those that stay in the word both ways left out.
async function printOutcomes() {
  const vocab = { "[UNK]": 0, ab: 1, cd: 2, "##cd": 3 };
  const model = () => hf.WordPiece.init(vocab, { unkToken: "[UNK]" });
  const [cased, uncased] = [bertTokenizer(model(), false), bertTokenizer(model(), true)];
  const ranges = [];
  for (let first = 0; first <= kLastCodePoint; first += kBatch) {
    const codePoints = codePointRange(first, Math.min(first + kBatch - 1, kLastCodePoint));
    const options = { addSpecialTokens: false };
    const [c, u] = await Promise.all(
      [cased, uncased].map((tokenizer) => tokenizer.encodeBatch(contexts(codePoints), options)));
    codePoints.forEach((cp, i) => {
      const value = `k${outcome(c[i])}, k${outcome(u[i])}`;
      const last = ranges[ranges.length - 1];
      if (last && last.value === value && last.last === cp - 1) last.last = cp;
      else ranges.push({ first: cp, last: cp, value });
    });
  }
  const hex = (cp) => "0x" + cp.toString(16).toUpperCase();
  const rows = ranges.filter((r) => r.value !== "kInWord, kInWord")
    .map((r) => `{${hex(r.first)}, ${hex(r.last)}, ${r.value}},`);
  const lines = [
    "// Generated by test/reference/hf_tokenizers/code_points.js outcomes from Hugging Face's",
    "// tokenizers library; do not edit. What becomes of c in \"ab\" + c + \"cd\" (vocabulary",
    "// [UNK] ab cd ##cd), cased and uncased, as ranges {first, last, cased, uncased} sorted by",
    "// code point; a code point not listed stays in its word both ways. Included by",
    "// tokenizer_unicode_test.cpp, which defines the element type.",
    "",
    "constexpr CodePointOutcomes kHfCodePointOutcomes[] = {",
  ];
  for (let i = 0; i < rows.length; i += 2) lines.push("    " + rows.slice(i, i + 2).join(" "));
  lines.push("};");
  process.stdout.write(lines.join("\n") + "\n");
}

const [command, argument] = process.argv.slice(2);
if (command === "vocab") writeVocab();
else if (command === "compare") compare(argument);
else if (command === "outcomes") printOutcomes();
else {
  console.error("usage: node code_points.js vocab | compare VOCAB | outcomes");
  process.exitCode = 2;
}

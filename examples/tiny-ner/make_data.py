"""Write a tiny token-classification task and its WordPiece vocab.txt.

Rows are {"tokens": [words], "ner_tags": [tags]} (Hugging Face's conll2003 names). Tags:
0 = other, 1 = the word after "mr" (a name), 2 = a colour word. A name needs the word
before it; plural words ("apples") are two word pieces, of which only the first carries
the tag. Deterministic from --seed; python3 standard library only.
"""
import argparse
import json
import random

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TITLE = "mr"
COLOURS = ["red", "blue", "green", "yellow"]
WORDS = """apple river stone cloud table window garden music paper forest engine
candle bridge mirror silver winter market ladder pocket valley hammer rocket
button island jacket kettle lemon magnet needle orange""".split()
PLURAL = "##s"


def make_row(rng, min_words, max_words):
    tokens, tags = [], []
    while len(tokens) < rng.randint(min_words, max_words):
        roll = rng.random()
        if roll < 0.15:
            tokens += [TITLE, rng.choice(WORDS)]
            tags += [0, 1]
        elif roll < 0.35:
            tokens.append(rng.choice(COLOURS))
            tags.append(2)
        else:
            word = rng.choice(WORDS)
            tokens.append(word + "s" if rng.random() < 0.3 else word)
            tags.append(0)
    return {"tokens": tokens, "ner_tags": tags}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--min-words", type=int, default=3)
    parser.add_argument("--max-words", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="JSONL file to write")
    parser.add_argument("--vocab", help="also write the vocab.txt here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(args.out, "w") as out:
        for _ in range(args.rows):
            out.write(json.dumps(make_row(rng, args.min_words, args.max_words)) + "\n")
    if args.vocab:
        with open(args.vocab, "w") as out:
            out.write("\n".join(SPECIAL + [TITLE] + COLOURS + WORDS + [PLURAL]) + "\n")


if __name__ == "__main__":
    main()

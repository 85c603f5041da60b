"""Write the tiny pre-tokenized classification set that end-to-end tests train on.

Each row is a BERT sentence pair `[CLS] q [SEP] b1 .. bm [SEP]`; its label is 1 iff the query
token q occurs in segment B. Only attention across tokens can answer it (see `make_row`).
Deterministic from --seed; python3 standard library only.
"""
import argparse
import json
import random
import sys

CLS_ID = 1
SEP_ID = 2
FIRST_CONTENT_ID = 5
MIN_ROW_LEN = 6  # [CLS] q [SEP] b1 b2 [SEP]: label 0 needs two B tokens to repeat one.


def make_row(label, row_len, vocab, rng):
    """Build one row of `row_len` tokens with the given label.

    Every row has exactly one token that occurs twice and all others once, so neither the
    token counts nor the row length reveal the label:
      1. label 1: q occurs once in B; B's other tokens are distinct and differ from q.
      2. label 0: some token x != q occurs twice in B; the rest are distinct and differ from q, x.
    Positions in B are shuffled, so the repeat can be anywhere.
    """
    segment_b_len = row_len - 4
    distinct = rng.sample(range(FIRST_CONTENT_ID, vocab), segment_b_len)
    query, others = distinct[0], distinct[1:]
    if label == 1:
        segment_b = [query] + others
    else:
        segment_b = [others[0]] + others
    rng.shuffle(segment_b)
    input_ids = [CLS_ID, query, SEP_ID] + segment_b + [SEP_ID]
    token_type_ids = [0, 0, 0] + [1] * (segment_b_len + 1)
    return {"input_ids": input_ids, "token_type_ids": token_type_ids, "label": label}


def make_rows(num_rows, vocab, min_len, max_len, seed):
    """Exactly num_rows/2 rows per class, in random order, lengths uniform in [min_len, max_len]."""
    rng = random.Random(seed)
    labels = [0, 1] * (num_rows // 2)
    rng.shuffle(labels)
    return [make_row(label, rng.randint(min_len, max_len), vocab, rng) for label in labels]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=256, help="number of rows (even)")
    parser.add_argument("--vocab", type=int, default=64, help="vocabulary size; content ids are in [5, vocab)")
    parser.add_argument("--min-len", type=int, default=6, help="shortest row, special tokens included")
    parser.add_argument("--max-len", type=int, default=16, help="longest row, special tokens included")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="JSONL file to write")
    args = parser.parse_args(argv)
    if args.rows <= 0 or args.rows % 2:
        parser.error("--rows must be positive and even so the classes are exactly balanced")
    if not MIN_ROW_LEN <= args.min_len <= args.max_len:
        parser.error(f"need {MIN_ROW_LEN} <= --min-len <= --max-len")
    if args.max_len - 4 > args.vocab - FIRST_CONTENT_ID:
        parser.error(f"--vocab {args.vocab} has too few content ids for rows of {args.max_len} tokens")
    return args


def main(argv):
    args = parse_args(argv)
    rows = make_rows(args.rows, args.vocab, args.min_len, args.max_len, args.seed)
    with open(args.out, "w") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])

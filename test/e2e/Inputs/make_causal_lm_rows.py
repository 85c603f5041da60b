"""Write pre-tokenized causal-LM rows: random ids of random lengths, every third row with
its own labels that mask a prompt of 1 to 4 tokens with -100 (loss on the completion only).
Deterministic from --seed; python3 standard library only."""
import argparse
import json
import random

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--rows", type=int, required=True)
parser.add_argument("--vocab", type=int, required=True)
parser.add_argument("--min-len", type=int, default=4)
parser.add_argument("--max-len", type=int, default=24)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--out", required=True)
args = parser.parse_args()
rng = random.Random(args.seed)
with open(args.out, "w") as f:
    for r in range(args.rows):
        ids = [rng.randrange(args.vocab) for _ in range(rng.randint(args.min_len, args.max_len))]
        row = {"input_ids": ids}
        if r % 3 == 2:
            prompt = rng.randint(1, min(4, len(ids) - 1))
            row["labels"] = [-100] * prompt + ids[prompt:]
        f.write(json.dumps(row) + "\n")

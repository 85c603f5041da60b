"""Write the tiny Llama QLoRA example's rows: arithmetic sequences modulo the vocabulary, as
examples/tiny-llama's, but with steps d in [9, 15], which the tiny Llama trained there never
saw (its steps are 1 to 7): it starts far off (a loss above ln 64) and the adapters on its
NF4 weights teach it the new steps.

The base model is examples/tiny-llama trained and saved as a Hugging Face folder into
base/ (scripts/run-example.sh examples/tiny-llama-qlora/model.toml does it all).
Deterministic from --seed; python3 standard library only.
"""
import argparse
import json
import os
import random

VOCAB = 64  # examples/tiny-llama's vocabulary


def make_rows(count, seed):
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        start, step, length = rng.randrange(VOCAB), rng.randint(9, 15), rng.randint(8, 32)
        rows.append({"input_ids": [(start + i * step) % VOCAB for i in range(length)]})
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=here, help="the folder to write train.jsonl into")
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "train.jsonl"), "w") as f:
        for row in make_rows(args.rows, args.seed):
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

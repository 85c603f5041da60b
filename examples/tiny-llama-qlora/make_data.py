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
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tiny-llama"))
from make_data import make_rows  # noqa: E402  (examples/tiny-llama's sequences)

STEPS = (9, 15)  # steps the tiny Llama never saw (it learned 1 to 7)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=here, help="the folder to write train.jsonl into")
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "train.jsonl"), "w") as f:
        for row in make_rows(args.rows, args.seed, STEPS):
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

"""Write a stand-in Hugging Face model folder: config.json of the tiny BERT (2 layers,
hidden 64, see test/reference/make_tiny_config.py) with the given positions and head, and
a copy of a vocab.txt. No model.safetensors: the trainer draws the initial weights. Lets an
example's model.toml (`from = "bert-base-cased"`) run unchanged in the tests.
Python 3 standard library only.
"""
import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from make_tiny_config import TINY_CONFIG  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to create")
    parser.add_argument("--vocab", required=True, help="vocab.txt to copy (its size sets vocab_size)")
    parser.add_argument("--max-position", type=int, required=True)
    parser.add_argument("--architecture", default="BertForSequenceClassification")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(args.vocab) as f:
        vocab_size = sum(1 for line in f if line.strip())
    config = dict(TINY_CONFIG, max_position_embeddings=args.max_position, vocab_size=vocab_size,
                  architectures=[args.architecture])
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    shutil.copy(args.vocab, os.path.join(args.out, "vocab.txt"))


if __name__ == "__main__":
    main()

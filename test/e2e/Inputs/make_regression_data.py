"""Write pre-tokenized JSONL rows with a regression target, for regression.test.

Each row is [CLS] t1 .. tn [SEP] with content ids in [5, 64); its "label" is the fraction
of content tokens whose id is at least 35, a number in [0, 1] only a look at every token
can give. Deterministic from --seed; python3 standard library only.
"""
import argparse
import json
import random


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(args.out, "w") as out:
        for _ in range(args.rows):
            content = [rng.randrange(5, 64) for _ in range(rng.randint(2, 14))]
            target = sum(token >= 35 for token in content) / len(content)
            out.write(json.dumps({"input_ids": [1] + content + [2], "label": target}) + "\n")


if __name__ == "__main__":
    main()

"""Summarise a metrics log for FileCheck: step count, first loss, mean of the last N."""
import argparse
import json
import sys


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("log", help="JSONL metrics log with a 'loss' per line")
    parser.add_argument("--window", type=int, default=100, help="steps averaged at the end")
    args = parser.parse_args(argv)
    with open(args.log) as f:
        records = [json.loads(line) for line in f if line.strip()]
    # Evaluation lines ("eval_loss", ...) carry no training loss.
    losses = [record["loss"] for record in records if "loss" in record]
    if not losses:
        sys.exit(f"{args.log}: no steps logged")
    tail = losses[-args.window:]
    print(f"steps {len(losses)}")
    print(f"first {losses[0]:.4f}")
    print(f"last-mean {sum(tail) / len(tail):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])

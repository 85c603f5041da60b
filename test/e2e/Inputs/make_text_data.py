"""Write a 64-token WordPiece vocab.txt and a GLUE-style train.tsv for text-data.test.

The vocabulary is [PAD] [UNK] [CLS] [SEP] [MASK] and 59 lower-case words. Each row is a
sentence of 3 to 12 words, its first word capitalised (the uncased tokenizer folds it), and
its label is 1 iff the word "good" occurs in it. Classes are exactly balanced; rows are
deterministic from --seed. python3 standard library only.
"""
import argparse
import os
import random
import sys

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CUE = "good"
WORDS = [CUE] + """the a film movie plot story actor scene music was is it this that and
but very quite rather long short slow fast old new big small dark bright loud quiet
funny sad odd plain script camera ending start cast score seems felt looks with
without of in on at for by from to then also just dull""".split()


def make_sentence(label, rng):
    """3 to 12 words other than the cue; a label-1 sentence has the cue at a random place."""
    others = [word for word in WORDS if word != CUE]
    words = [rng.choice(others) for _ in range(rng.randint(3, 12))]
    if label == 1:
        words[rng.randrange(len(words))] = CUE
    words[0] = words[0].capitalize()
    return " ".join(words)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1024, help="number of rows (even)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="folder for vocab.txt and train.tsv")
    args = parser.parse_args(argv)
    if args.rows <= 0 or args.rows % 2:
        parser.error("--rows must be positive and even so the classes are exactly balanced")
    vocab = SPECIAL + WORDS
    assert len(vocab) == 64 and len(set(vocab)) == 64, len(vocab)
    rng = random.Random(args.seed)
    labels = [0, 1] * (args.rows // 2)
    rng.shuffle(labels)
    with open(os.path.join(args.out, "vocab.txt"), "w") as out:
        out.write("".join(token + "\n" for token in vocab))
    with open(os.path.join(args.out, "train.tsv"), "w") as out:
        out.write("sentence\tlabel\n")
        for label in labels:
            out.write(f"{make_sentence(label, rng)}\t{label}\n")


if __name__ == "__main__":
    main(sys.argv[1:])

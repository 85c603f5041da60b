"""Write a tiny SQuAD v1.1 task and its WordPiece vocab.txt, for the span head's tests.

Each context is a run of random words holding two markers, "red" and "blue", each followed
by one word; the question "what follows red" (or "blue") is answered by the word after that
marker. Only attention from the question to the context can answer it. Some contexts are
longer than a 24-token window, so the trainer's doc-stride windows are exercised too.
Deterministic from --seed; python3 standard library only.
"""
import argparse
import json
import os
import random

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
MARKERS = ["red", "blue"]
QUESTION = ["what", "follows"]
WORDS = """apple river stone cloud table window garden music paper forest engine
candle bridge mirror silver winter market ladder pocket valley hammer rocket
button island jacket kettle lemon magnet needle orange pepper quartz saddle
tunnel violin wagon yogurt zipper anchor basket cactus""".split()


def make_question(qid, rng, min_words, max_words):
    """A context of min..max random words with both markers placed at random, each
    followed by its answer word; the question asks for one marker's word."""
    filler = [rng.choice(WORDS) for _ in range(rng.randint(min_words, max_words))]
    answers = rng.sample(WORDS, 2)
    slots = sorted(rng.sample(range(len(filler) + 1), 2))
    words = list(filler)
    for slot, marker, answer in reversed(list(zip(slots, MARKERS, answers))):
        words[slot:slot] = [marker, answer]
    asked = rng.randrange(2)
    context = " ".join(words)
    answer_index = words.index(MARKERS[asked]) + 1
    answer_start = len(" ".join(words[:answer_index])) + 1
    answer = answers[asked]
    assert context[answer_start:answer_start + len(answer)] == answer
    return context, {
        "id": f"q{qid}",
        "question": " ".join(QUESTION + [MARKERS[asked]]),
        "answers": [{"text": answer, "answer_start": answer_start}],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=512)
    parser.add_argument("--min-words", type=int, default=4)
    parser.add_argument("--max-words", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="SQuAD JSON file to write")
    parser.add_argument("--vocab", help="also write the vocab.txt here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    paragraphs = []
    for qid in range(args.questions):
        context, qa = make_question(f"{args.seed}-{qid}", rng, args.min_words, args.max_words)
        paragraphs.append({"context": context, "qas": [qa]})
    with open(args.out, "w") as out:
        json.dump({"version": "1.1", "data": [{"title": "tiny", "paragraphs": paragraphs}]}, out)
    if args.vocab:
        with open(args.vocab, "w") as out:
            out.write("\n".join(SPECIAL + MARKERS + QUESTION + WORDS) + "\n")


if __name__ == "__main__":
    main()

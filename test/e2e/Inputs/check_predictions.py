"""Check the prediction files a span task's --save-best folder holds, against the scores.

Reads FOLDER/predictions.json, nbest_predictions.json and eval_results.json and checks, for
--questions questions of the SQuAD file --data (in file order): each question's n-best list
has --n-best entries ranked by start + end logit, its first text is the prediction, and its
probabilities sum to 1; and the official SQuAD v1.1 script's exact match and F1 over the
predictions (its normalize_answer, written out below) equal eval_results.json's. Prints one
line for FileCheck; exits naming the first problem.
"""
import argparse
import collections
import json
import re
import string
import sys


def normalize_answer(s):
    """Lower text and remove punctuation, articles and extra whitespace (SQuAD's script)."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def f1_score(prediction, ground_truth):
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = collections.Counter(prediction_tokens) & collections.Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = num_same / len(prediction_tokens)
    recall = num_same / len(ground_truth_tokens)
    return 2 * precision * recall / (precision + recall)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--data", required=True, help="the SQuAD v1.1 file evaluated")
    parser.add_argument("--questions", type=int, required=True)
    parser.add_argument("--n-best", type=int, required=True)
    args = parser.parse_args(argv)
    with open(f"{args.folder}/predictions.json") as f:
        predictions = json.load(f)
    with open(f"{args.folder}/nbest_predictions.json") as f:
        n_best = json.load(f)
    with open(f"{args.folder}/eval_results.json") as f:
        results = json.load(f)
    with open(args.data) as f:
        questions = [qa for article in json.load(f)["data"] for paragraph in article["paragraphs"]
                     for qa in paragraph["qas"]]
    ids = [qa["id"] for qa in questions]
    if len(ids) != args.questions or list(predictions) != ids or list(n_best) != ids:
        sys.exit(f"expected the {args.questions} ids of {args.data} in file order")
    for qid in ids:
        ranked = n_best[qid]
        scores = [answer["start_logit"] + answer["end_logit"] for answer in ranked]
        if len(ranked) != args.n_best or scores != sorted(scores, reverse=True):
            sys.exit(f"{qid}: not {args.n_best} answers ranked by score: {scores}")
        if ranked[0]["text"] != predictions[qid]:
            sys.exit(f"{qid}: prediction {predictions[qid]!r} is not the best {ranked[0]['text']!r}")
        if abs(sum(answer["probability"] for answer in ranked) - 1) > 1e-6:
            sys.exit(f"{qid}: probabilities do not sum to 1")
    exact = 100 * sum(max(float(normalize_answer(predictions[qa["id"]]) == normalize_answer(a["text"]))
                          for a in qa["answers"]) for qa in questions) / len(questions)
    f1 = 100 * sum(max(f1_score(predictions[qa["id"]], a["text"]) for a in qa["answers"])
                   for qa in questions) / len(questions)
    for name, official in (("exact_match", exact), ("f1", f1)):
        if abs(results[f"eval_{name}"] - official) > 1e-9:
            sys.exit(f"{name}: bertc {results[f'eval_{name}']} but the official script {official}")
    print(f"predictions {len(ids)}, n-best {args.n_best} each, probabilities sum to 1, "
          "scores as the official script's")


if __name__ == "__main__":
    main(sys.argv[1:])

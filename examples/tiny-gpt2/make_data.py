"""Write the tiny GPT-2 example: a Hugging Face folder holding only config.json (so bertc
initialises the weights from the seed, drawn as from_config draws them) and pre-tokenized
rows to learn.

Each row repeats a motif of 3 to 6 random tokens until the row is 12 to 40 tokens long:
once a model has seen the motif, it predicts every later token by looking back one period
(what GPT-2's attention learns as induction heads), so the loss falls well below
log(vocab). Deterministic from --seed; python3 standard library only.
"""
import argparse
import json
import os
import random

VOCAB = 96

TINY_GPT2 = {  # a GPT2Config: learned positions, Conv1D projections, gelu_new, tied LM head
    "model_type": "gpt2",
    "architectures": ["GPT2LMHeadModel"],
    "n_embd": 64,
    "n_layer": 2,
    "n_head": 4,
    "n_inner": None,
    "n_positions": 64,
    "n_ctx": 64,
    "vocab_size": VOCAB,
    "activation_function": "gelu_new",
    "resid_pdrop": 0.0,
    "embd_pdrop": 0.0,
    "attn_pdrop": 0.0,
    "layer_norm_epsilon": 1e-5,
    "initializer_range": 0.02,
    "tie_word_embeddings": True,
    "bos_token_id": VOCAB - 1,
    "eos_token_id": VOCAB - 1,
}


def make_rows(count, seed):
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        motif = [rng.randrange(VOCAB - 1) for _ in range(rng.randint(3, 6))]
        length = rng.randint(12, 40)
        rows.append({"input_ids": [motif[i % len(motif)] for i in range(length)]})
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=here, help="the folder to write model/ and train.jsonl into")
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--config-only", action="store_true", help="write model/config.json alone")
    args = parser.parse_args()
    os.makedirs(os.path.join(args.out, "model"), exist_ok=True)
    with open(os.path.join(args.out, "model", "config.json"), "w") as f:
        json.dump(TINY_GPT2, f, indent=2)
        f.write("\n")
    if args.config_only:
        return
    with open(os.path.join(args.out, "train.jsonl"), "w") as f:
        for row in make_rows(args.rows, args.seed):
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

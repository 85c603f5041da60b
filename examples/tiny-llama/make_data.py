"""Write the tiny Llama example: a Hugging Face folder holding only config.json (so bertc
initialises the weights from the seed, as from_config does) and pre-tokenized rows to
learn.

Each row is an arithmetic sequence modulo the vocabulary, s, s + d, s + 2d, ..., with its
step d in [1, 7] given by the row's first two tokens: once a model has read them, every
next token is predictable, so the loss falls well below log(vocab). Rows are 8 to 32
tokens long. Deterministic from --seed; python3 standard library only.
"""
import argparse
import json
import os
import random

VOCAB = 64

TINY_LLAMA = {  # a LlamaConfig: grouped-query attention (4 query heads share 2 key/value heads)
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "hidden_act": "silu",
    "max_position_embeddings": 128,
    "vocab_size": VOCAB,
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "rope_scaling": None,
    "tie_word_embeddings": False,
    "initializer_range": 0.02,
    "bos_token_id": 1,
    "eos_token_id": 2,
}


def make_rows(count, seed, steps=(1, 7)):
    """`count` sequences, each of a step drawn from `steps` (inclusive)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        start, step, length = rng.randrange(VOCAB), rng.randint(*steps), rng.randint(8, 32)
        rows.append({"input_ids": [(start + i * step) % VOCAB for i in range(length)]})
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
        json.dump(TINY_LLAMA, f, indent=2)
        f.write("\n")
    if args.config_only:
        return
    with open(os.path.join(args.out, "train.jsonl"), "w") as f:
        for row in make_rows(args.rows, args.seed):
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

"""Write the HF config.json of the tiny BERT that reference comparisons train.

2 layers, hidden 64, 4 heads, intermediate 128, vocab 64 (matches examples/tiny/make_data.py),
32 positions, 2 token types, 2 labels, dropout 0 so runs are comparable step by step.
"""
import argparse
import json
import sys

TINY_CONFIG = {
    "model_type": "bert",
    "architectures": ["BertForSequenceClassification"],
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 128,
    "vocab_size": 64,
    "max_position_embeddings": 32,
    "type_vocab_size": 2,
    "num_labels": 2,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
    "layer_norm_eps": 1e-12,
    "initializer_range": 0.02,
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="config.json to write")
    parser.add_argument("--layers", type=int, default=TINY_CONFIG["num_hidden_layers"],
                        help="encoder layers (default 2)")
    args = parser.parse_args(argv)
    with open(args.out, "w") as f:
        json.dump({**TINY_CONFIG, "num_hidden_layers": args.layers}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Checks a metrics log of fp16 steps: every step that follows a skipped step (its
skipped_steps count grew) runs at the learning rate of that skipped step."""
import json
import sys


def main(path):
    steps = [json.loads(line) for line in open(path) if line.strip()]
    steps = [step for step in steps if "loss_scale" in step]
    checked = 0
    for before, skipped, after in zip(steps, steps[1:], steps[2:]):
        if skipped["skipped_steps"] > before["skipped_steps"]:
            if after["lr"] != skipped["lr"]:
                sys.exit(f"step {after['step']}: lr {after['lr']} after the skipped step "
                         f"{skipped['step']} at lr {skipped['lr']}")
            checked += 1
    print(f"{checked} steps after a skipped one, each at the rate before it")


if __name__ == "__main__":
    main(*sys.argv[1:])

"""Run a command and SIGKILL it once a file exists (or let it finish first).

    kill_after.py --when-exists out/checkpoint-40/trainer_state.json -- trainer --steps 120 ...

Exits 0 when the file appeared (whether the command was killed or had already ended) and 1
when the command ended without ever writing it. Python standard library only.
"""
import argparse
import os
import signal
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--when-exists", required=True, help="file whose appearance triggers the kill")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- command and arguments")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with open(os.devnull, "w") as quiet:
        child = subprocess.Popen(command, stdout=quiet, stderr=quiet)
        while child.poll() is None and not os.path.exists(args.when_exists):
            time.sleep(0.001)
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
        child.wait()
    if not os.path.exists(args.when_exists):
        print(f"kill_after: {command[0]} ended without writing {args.when_exists}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

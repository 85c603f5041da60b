"""Runs the examples of README.md and docs/*.md as a reader would (test/docs/examples.test).

The rules the documents follow (docs/testing.md, "The documents' examples"):

  ```toml        written to model.toml in the document's scratch folder, replacing the last
                 one; bertc-import must accept it
  ```toml error  the same, but bertc-import must refuse it (a console block after it shows
                 the message, and the test compares it)
  ```sh          each command is run in order, in the document's scratch folder, and must
                 exit with 0
  ```console     each `$ command` is run; the lines after it are its output (stdout and
                 stderr together), which must match: `...` in a line stands for any text, a
                 line of `...` alone for any lines; a command whose output shows `error:` must
                 fail, any other must exit with 0
  gpu            after the language (```sh gpu): run only where nvidia-smi lists a GPU

Where bertc was built without nvcc, which --target cuda needs, a command that only plans
(-emit=plan, --max-batch, --max-seq) runs with --target cuda-sim instead: it plans the same.

Commands of bertc, bertc-import, bertc-opt, build/bin/bertc, a trainer (a path ending in
/trainer) and python3 are run; other programs (scripts/..., cmake, curl) are shown, not run,
and a scripts/ path must exist. A document's scratch folder starts as a copy of the
repository's examples/ and bench/models/ with the examples' data generated (the tiny
example's as scripts/run-example.sh generates it) and, as the two bert-base examples' README
say to download, a bert-base-cased folder beside their model.toml holding the published
config.json (planning reads no more of it); build/bin holds the tools under test.
Every fenced block must name its language, and a command outside one is an error, so that
no example escapes this test.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

RUN_PROGRAMS = {"bertc", "bertc-import", "bertc-opt", "build/bin/bertc", "python3"}
LANGUAGES = {"toml", "sh", "console", "text", "json", "mlir", "cpp", "python"}
COMMAND_TIMEOUT_S = 300

# bert-base-cased's config.json as the Hugging Face hub publishes it.
BERT_BASE_CASED = {
    "architectures": ["BertForMaskedLM"],
    "attention_probs_dropout_prob": 0.1,
    "gradient_checkpointing": False,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512,
    "model_type": "bert",
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
    "transformers_version": "4.6.0.dev0",
    "type_vocab_size": 2,
    "use_cache": True,
    "vocab_size": 28996,
}


class DocError(Exception):
    pass


def fenced_blocks(path):
    """(language, flags, first line number, lines) of each fenced block, after checking that
    no command or TOML table sits in an indented block or an unnamed fence."""
    blocks = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = re.match(r"^(\s*)(```+)(.*)$", line)
        if not fence:
            stripped = line.strip()
            if line.startswith("    ") and re.match(
                    r"^(\$ )?((build/bin/)?bertc(-import|-opt)? .*\.(toml|mlir)\b|\S+/trainer( |$))"
                    r"|^\[(model|head|train|data)\]$",
                    stripped):
                raise DocError(f"{path}:{i + 1}: an indented example: use a fenced block "
                               "(```sh, ```console or ```toml) so that it is run")
            i += 1
            continue
        indent, ticks, info = fence.groups()
        words = info.split()
        if not words or words[0] not in LANGUAGES:
            raise DocError(f"{path}:{i + 1}: a fenced block must name its language "
                           f"({', '.join(sorted(LANGUAGES))}), got '{info.strip()}'")
        body = []
        start = i + 1
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i == len(lines):
            raise DocError(f"{path}:{start}: unclosed fenced block")
        blocks.append((words[0], set(words[1:]), start, body))
        i += 1
    return blocks


def logical_lines(lines):
    """Lines with their `\\` continuations joined."""
    joined, current = [], ""
    for line in lines:
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    if current:
        joined.append(current)
    return joined


def program_of(command):
    words = shlex.split(command, comments=True)
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]
    return words[0] if words else None


def is_run(program):
    return program in RUN_PROGRAMS or program.endswith("/trainer")


def line_matches(expected, actual):
    if "..." not in expected:
        return expected.rstrip() == actual.rstrip()
    pattern = ".*".join(re.escape(part) for part in expected.rstrip().split("..."))
    return re.fullmatch(pattern, actual.rstrip()) is not None


def output_matches(expected, actual):
    """Whether `actual` lines match `expected`, a `...` line matching any lines."""
    memo = {}

    def match(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            result = j == len(actual)
        elif expected[i].strip() == "...":
            result = any(match(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            result = j < len(actual) and line_matches(expected[i], actual[j]) and match(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    sys.setrecursionlimit(max(10000, 4 * (len(expected) + len(actual))))
    return match(0, 0)


class Runner:
    def __init__(self, src, bin_dir, gpu, nvcc):
        self.src, self.bin_dir, self.gpu, self.nvcc = src, bin_dir, gpu, nvcc
        self.env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
        self.counts = {"toml": 0, "run": 0, "shown": 0, "gpu-skipped": 0}

    def run(self, command, cwd):
        result = subprocess.run(["bash", "-c", command], cwd=cwd, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                timeout=COMMAND_TIMEOUT_S, text=True, errors="replace")
        return result.returncode, result.stdout

    def command(self, where, command, cwd):
        """Runs `command` when it is one of bertc's, else checks what it names; None when
        not run."""
        program = program_of(command)
        if program is None:
            return None
        if not is_run(program):
            if program.startswith("scripts/") and not os.path.exists(os.path.join(self.src, program)):
                raise DocError(f"{where}: '{program}' does not exist")
            self.counts["shown"] += 1
            return None
        self.counts["run"] += 1
        if not self.nvcc and re.search(r"-emit=plan|--max-batch|--max-seq", command):
            command = re.sub(r"--target(=| )cuda(?=\s|$)", r"--target\1cuda-sim", command)
        return self.run(command, cwd)

    def toml(self, where, body, flags, cwd):
        with open(os.path.join(cwd, "model.toml"), "w", encoding="utf-8") as f:
            f.write("\n".join(body) + "\n")
        self.counts["toml"] += 1
        code, out = self.run("bertc-import model.toml > /dev/null", cwd)
        if "error" in flags and code == 0:
            raise DocError(f"{where}: this TOML is shown as an error, but bertc-import accepts it")
        if "error" not in flags and code != 0:
            raise DocError(f"{where}: bertc-import refuses this TOML:\n{out}")

    def sh(self, where, body, cwd):
        for command in logical_lines(body):
            ran = self.command(where, command, cwd)
            if ran and ran[0] != 0:
                raise DocError(f"{where}: '{command}' exited with {ran[0]}:\n{ran[1]}")

    def console(self, where, body, cwd):
        steps = []  # (command, expected output lines)
        for line in logical_lines(body):
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif not steps:
                raise DocError(f"{where}: a console block starts with '$ command'")
            else:
                steps[-1][1].append(line)
        for command, expected in steps:
            while expected and not expected[-1].strip():
                expected.pop()
            ran = self.command(where, command, cwd)
            if ran is None:
                continue
            code, out = ran
            actual = out.rstrip("\n").split("\n") if out else []
            should_fail = any("error:" in line for line in expected)
            if should_fail != (code != 0):
                raise DocError(f"{where}: '{command}' exited with {code}, but the document "
                               f"shows {'a failure' if should_fail else 'a success'}:\n{out}")
            if not output_matches(expected, actual):
                raise DocError(f"{where}: the output of '{command}' differs from the document's."
                               f"\n--- the document's:\n" + "\n".join(expected) +
                               "\n--- bertc's:\n" + out)

    def document(self, path, cwd):
        name = os.path.relpath(path, self.src)
        for language, flags, line, body in fenced_blocks(path):
            where = f"{name}:{line}"
            if "gpu" in flags and not self.gpu:
                self.counts["gpu-skipped"] += 1
                continue
            if language == "toml":
                self.toml(where, body, flags, cwd)
            elif language == "sh":
                self.sh(where, body, cwd)
            elif language == "console":
                self.console(where, body, cwd)


def stage(src, bin_dir, scratch):
    """The folder each document's examples start from."""
    folder = os.path.join(scratch, "stage")
    generated = shutil.ignore_patterns("*.jsonl", "model", "bert-base-cased", "SST-2", "squad",
                                       "out", "__pycache__")
    shutil.copytree(os.path.join(src, "examples"), os.path.join(folder, "examples"), ignore=generated)
    shutil.copytree(os.path.join(src, "bench", "models"), os.path.join(folder, "bench", "models"))
    os.makedirs(os.path.join(folder, "build"))
    os.symlink(bin_dir, os.path.join(folder, "build", "bin"))
    python = [sys.executable or "python3"]
    subprocess.run(python + ["examples/tiny/make_data.py", "--rows", "2048", "--seed", "1",
                             "--out", "examples/tiny/train.jsonl"], cwd=folder, check=True,
                   stdout=subprocess.DEVNULL)
    for decoder in ("tiny-llama", "tiny-gpt2"):
        subprocess.run(python + [f"examples/{decoder}/make_data.py"], cwd=folder, check=True,
                       stdout=subprocess.DEVNULL)
    for example in ("bert-base-sst2", "bert-base-squad"):
        checkpoint = os.path.join(folder, "examples", example, "bert-base-cased")
        os.makedirs(checkpoint)
        with open(os.path.join(checkpoint, "config.json"), "w", encoding="utf-8") as f:
            json.dump(BERT_BASE_CASED, f, indent=2)
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", required=True, help="the repository")
    parser.add_argument("--scratch", required=True, help="an empty folder to work in")
    parser.add_argument("documents", nargs="*",
                        help="Markdown files (default: README.md and docs/*.md)")
    args = parser.parse_args()
    src = os.path.abspath(args.src)
    bertc = shutil.which("bertc")
    if not bertc:
        sys.exit("doc_examples.py: bertc is not on PATH")
    bin_dir = os.path.dirname(os.path.realpath(bertc))
    documents = args.documents or [os.path.join(src, "README.md")] + sorted(
        os.path.join(src, "docs", name) for name in os.listdir(os.path.join(src, "docs"))
        if name.endswith(".md"))
    gpu = shutil.which("nvidia-smi") is not None and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True, text=True).stdout.startswith("GPU")
    staged = stage(src, bin_dir, os.path.abspath(args.scratch))
    nvcc = subprocess.run([bertc, "examples/tiny/model.toml", "--vram", "1GB", "--target", "cuda",
                           "-emit=plan", "-o", os.path.join(args.scratch, "nvcc-probe")],
                          cwd=staged, capture_output=True).returncode == 0
    runner = Runner(src, bin_dir, gpu, nvcc)
    try:
        for path in documents:
            cwd = os.path.join(os.path.abspath(args.scratch),
                               os.path.splitext(os.path.basename(path))[0])
            shutil.copytree(staged, cwd, symlinks=True)
            runner.document(path, cwd)
    except (DocError, subprocess.TimeoutExpired) as error:
        sys.exit(f"doc_examples.py: {error}")
    c = runner.counts
    print(f"docs examples: {c['toml']} TOML blocks, {c['run']} commands run, {c['shown']} shown "
          f"(not run), {c['gpu-skipped']} GPU blocks skipped, in {len(documents)} documents")


if __name__ == "__main__":
    main()

"""Checks the relative links of the repository's Markdown files (test/docs/links.test).

Each [text](target) or ![alt](target) whose target is not a URL must name a file or folder
that exists, relative to the document, and a #fragment must be a heading of the Markdown
file it names (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens).
Code spans and fenced blocks are not read for links. Prints one line per document checked.
"""
import argparse
import os
import re
import subprocess
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose_lines(path):
    """The document's lines outside fenced blocks, code spans blanked."""
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if not in_fence:
                yield number, re.sub(r"`[^`]*`", "``", line)


def anchors(path):
    """GitHub's anchors of a Markdown file's headings."""
    found, seen = set(), {}
    for _, line in prose_lines(path):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        text = re.sub(r"`", "", heading.group(1)).strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def check(path, problems):
    folder = os.path.dirname(path)
    for number, line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            file_part, _, fragment = target.partition("#")
            resolved = os.path.normpath(os.path.join(folder, file_part)) if file_part else path
            if not os.path.exists(resolved):
                problems.append(f"{path}:{number}: '{target}': {resolved} does not exist")
            elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                problems.append(f"{path}:{number}: '{target}': no heading '#{fragment}' in {resolved}")


def markdown_files(src):
    """The repository's Markdown files: git's list (tracked, and new ones not ignored), else,
    outside a git checkout, every one outside build folders."""
    listed = subprocess.run(["git", "-C", src, "ls-files", "--cached", "--others",
                             "--exclude-standard", "*.md"], capture_output=True, text=True)
    if listed.returncode == 0:
        return [path for path in listed.stdout.split("\n") if path]
    found = []
    for folder, subfolders, files in os.walk(src):
        subfolders[:] = [name for name in subfolders
                         if not name.startswith(("build", ".")) and name not in ("out", "gpu-bundle")]
        found += [os.path.relpath(os.path.join(folder, name), src)
                  for name in files if name.endswith(".md")]
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", required=True, help="the repository")
    args = parser.parse_args()
    documents = sorted(path for path in markdown_files(args.src) if "node_modules" not in path)
    problems = []
    for document in documents:
        check(os.path.join(args.src, document), problems)
        print(f"checked {document}")
    if problems:
        sys.exit("\n".join(problems))


if __name__ == "__main__":
    main()

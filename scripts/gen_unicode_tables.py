#!/usr/bin/env python3
"""Generates the Unicode tables of the runtime's text handling, in two files.

runtime/data/unicode_tables.inc holds what the official SQuAD evaluation script asks Python
(str.lower, str.isalnum, str.isspace), from the unicodedata of the Python that runs this
script (Debian 12's Python 3.11: Unicode 14.0).

runtime/data/tokenizer_unicode_tables.inc holds what Hugging Face's tokenizers library (Rust,
0.22: BertNormalizer, BertPreTokenizer) computes, and it takes each property from another
Unicode version than Python's:
  - the general categories clean_text, BertPreTokenizer and strip_accents ask (is_other,
    is_punctuation, is_mark_nonspacing) come from the unicode_categories crate 0.1.1, whose
    tables are Unicode 8.0: a mark, punctuation or format character added since is an
    ordinary letter to it, and U+166D and U+111C9 (Po then) and U+1734 (Mn then) keep
    their Unicode 8.0 categories;
  - NFD comes from the unicode-normalization-alignments crate 0.1.12, Unicode 9.0:
    U+11938 (Unicode 13) does not decompose, and the non-starters added since 9.0 are
    starters to it;
  - lower-casing and white space are Rust's std (char::to_lowercase, char::is_whitespace),
    of the Rust that built the library: Unicode 17.0 for the Node binding, 55 lower-case
    mappings newer than Python 3.11's.
No Python has these versions, so this script reads the tables from the library itself:
test/reference/hf_tokenizers/probe_unicode.js (node, with the Node binding
@anush008/tokenizers that scripts/setup.sh installs, pinned by its package-lock.json) runs the
library's normalizers and pre-tokenizer on every code point once. Canonical combining
classes are not visible one character at a time, but which characters are non-starters is
(NFD reorders them): those get Python's class, which Unicode never changes once assigned.
With these tables bertc tokenizes "ab" + c + "cd" as the library does for every code point c,
cased and uncased (test/tokenizer/every-code-point.test). What remains is that lower-casing
follows the Rust that built the library: a build of it by a Rust whose Unicode is older
than 17.0 (a Python wheel of the same release may be one) leaves the capitals added since
as they are, which bertc lower-cases.

The build never runs this script; rerun it by hand from the repository root and commit the
result:
    python3 scripts/gen_unicode_tables.py
"""
import subprocess
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "test/reference/hf_tokenizers/probe_unicode.js"
MAX_CODE_POINT = 0x10FFFF
HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)  # decomposed algorithmically by the tokenizer

# What the official SQuAD script's normalize_answer consults, as flags (the bits of
# unicode::TextProperty in unicode_text.h): \w of its regular expression (str.isalnum() or
# "_"), what str.split() splits on (str.isspace()), and the two properties str.lower() reads
# around a capital sigma (Final_Sigma). Python exposes Cased and Case_Ignorable only through
# str.lower() itself, so they are read back from it.
WORD, SPACE_CHAR, CASED, CASE_IGNORABLE = 1, 2, 4, 8


def lowers_to_final_sigma(text, index):
    return text.lower()[index] == "\u03c2"


def text_properties(cp):
    """The flags of one code point, or None when it has none. A sigma is final when a cased
    character precedes it and none follows, skipping case-ignorable ones; probing "cΣ",
    "AcΣ" and "AΣc" tells for each c whether it is case-ignorable, and, when it is not,
    whether it is cased (the only case where str.lower() asks)."""
    char = chr(cp)
    flags = 0
    if char.isalnum() or char == "_":
        flags |= WORD
    if char.isspace():
        flags |= SPACE_CHAR
    cased_alone = lowers_to_final_sigma(char + "\u03a3", -1)  # cased and not case-ignorable
    skipped_or_cased = lowers_to_final_sigma("A" + char + "\u03a3", -1)
    if not cased_alone and skipped_or_cased:
        flags |= CASE_IGNORABLE
        assert lowers_to_final_sigma("A\u03a3" + char, 1), hex(cp)
    elif cased_alone:
        flags |= CASED
    return flags or None


class Probed:
    """One line of probe_unicode.js: what the tokenizers library does to one code point."""

    def __init__(self, line):
        fields = line.rstrip("\n").split("\t")
        chars = [[int(part, 16) for part in field.split(",") if part] for field in fields]
        self.code_point = chars[0][0]
        self.cleaned, self.nfd, self.stripped, self.lower = chars[1], chars[3], chars[4], chars[5]
        self.pieces, self.reordered = int(fields[2]), fields[6] == "1"


def probe_library():
    """{code point: Probed} for every code point but the surrogates."""
    output = subprocess.run(["node", str(PROBE)], cwd=PROBE.parent, check=True,
                            capture_output=True, text=True).stdout
    probed = {p.code_point: p for p in map(Probed, output.splitlines())}
    assert len(probed) == MAX_CODE_POINT + 1 - 0x800, len(probed)
    return probed


# Character classes, as BertNormalizer (clean_text, strip_accents) and BertPreTokenizer see
# them; every code point not listed is kOther.
DROP, SPACE, PUNCT, MARK = "kDrop", "kSpace", "kPunct", "kMark"


def char_class(p):
    """The library's predicates in the order it applies them: clean_text drops a character
    (NUL, U+FFFD, is_other: Cc, Cf, Co but \\t \\n \\r) or makes it a space (white space),
    BertPreTokenizer isolates punctuation (ASCII symbols or P*), and strip_accents drops
    what NFD leaves that is Mn."""
    if not p.cleaned:
        return DROP
    if p.cleaned == [0x20]:
        return SPACE
    assert p.cleaned == [p.code_point] and p.pieces != 2, hex(p.code_point)
    if p.pieces == 3:
        return PUNCT
    if p.nfd == [p.code_point] and not p.stripped:
        return MARK
    return None


def ranges_of(value_of):
    """[(first, last, value)] over maximal runs of equal, non-None values."""
    runs = []
    for cp in range(MAX_CODE_POINT + 1):
        value = value_of(cp)
        if value is None:
            continue
        if runs and runs[-1][1] == cp - 1 and runs[-1][2] == value:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp, value])
    return runs


def lower_runs(lower_of):
    """A lower-casing (lower_of(cp): a list of code points) as runs (first, last, stride,
    delta), every stride-th code point from first to last lower-casing to itself + delta,
    and its mappings to two code points apart."""
    singles, pairs = [], []
    for cp in range(MAX_CODE_POINT + 1):
        lower = lower_of(cp)
        if lower == [cp]:
            continue
        if len(lower) == 1:
            singles.append((cp, lower[0] - cp))
        else:
            assert len(lower) == 2, hex(cp)
            pairs.append((cp, lower))
    runs = []
    for cp, delta in singles:
        last = runs[-1] if runs else None
        extends = last and last[3] == delta and (
            cp == last[1] + last[2] if last[2] else cp - last[1] in (1, 2))
        if extends:
            last[2] = cp - last[1]
            last[1] = cp
        else:
            runs.append([cp, cp, 0, delta])
    for run in runs:
        run[2] = run[2] or 1
    return runs, pairs


def python_lower(cp):
    return [ord(c) for c in chr(cp).lower()]


def decompositions(probed):
    """(code point, first, second or 0) for each canonical decomposition the library makes,
    one level deep (Python's, which agrees where both decompose), checked to expand to the
    library's full NFD."""
    entries = {}
    for cp, p in probed.items():
        if cp in HANGUL_SYLLABLES or p.nfd == [cp]:
            continue
        parts = [int(part, 16) for part in unicodedata.decomposition(chr(cp)).split()]
        assert len(parts) in (1, 2), hex(cp)
        entries[cp] = (parts[0], parts[1] if len(parts) == 2 else 0)

    def expand(cp):
        if cp not in entries:
            return [cp]
        first, second = entries[cp]
        return expand(first) + (expand(second) if second else [])

    for cp in entries:
        assert expand(cp) == probed[cp].nfd, hex(cp)
    return [(cp, first, second) for cp, (first, second) in sorted(entries.items())]


def combining_class(probed, cp):
    """Python's class for what the library's NFD treats as a non-starter, and for what
    decomposes (the tokenizer asks only the parts), else None (class 0)."""
    p = probed.get(cp)
    if p is None or (p.nfd == [cp] and not p.reordered):
        return None
    assert unicodedata.combining(chr(cp)) or not p.reordered, hex(cp)
    return unicodedata.combining(chr(cp)) or None


def emit(out, name, element, rows, per_line):
    print(f"constexpr {element} {name}[] = {{", file=out)
    for start in range(0, len(rows), per_line):
        print("    " + " ".join(rows[start:start + per_line]), file=out)
    print("};", file=out)
    print(file=out)


def emit_lower(out, runs_name, pairs_name, lower_of):
    runs, pairs = lower_runs(lower_of)
    emit(out, runs_name, "LowerRun", [f"{{0x{a:X}, 0x{b:X}, {s}, {d}}}," for a, b, s, d in runs], 4)
    emit(out, pairs_name, "LowerPair",
         [f"{{0x{cp:X}, {{0x{l[0]:X}, 0x{l[1]:X}}}}}," for cp, l in pairs], 4)


def write_python_tables(out):
    python = sys.version.split()[0]
    print(f"// Generated by scripts/gen_unicode_tables.py from Python {python}'s unicodedata", file=out)
    print(f"// (Unicode {unicodedata.unidata_version}); do not edit. Included by unicode_text.cpp,"
          " which defines", file=out)
    print("// the element types with unicode_lookup.h. Every table is sorted by code point.",
          file=out)
    print(file=out)
    emit_lower(out, "kLowerRuns", "kLowerPairs", python_lower)
    emit(out, "kTextPropertyRanges", "TextPropertyRange",
         [f"{{0x{a:X}, 0x{b:X}, {f}}}," for a, b, f in ranges_of(text_properties)], 5)


def write_tokenizer_tables(out, probed):
    print("// Generated by scripts/gen_unicode_tables.py from Hugging Face's tokenizers library"
          " (its", file=out)
    print("// Node binding, test/reference/hf_tokenizers); do not edit. Included by"
          " tokenizer_unicode.cpp,", file=out)
    print("// which defines the element types with unicode_lookup.h. Every table is sorted by"
          " code point.", file=out)
    print(file=out)
    classes = ranges_of(lambda cp: char_class(probed[cp]) if cp in probed else None)
    emit(out, "kCharClassRanges", "CharClassRange",
         [f"{{0x{a:X}, 0x{b:X}, {c}}}," for a, b, c in classes], 4)
    combining = ranges_of(lambda cp: combining_class(probed, cp))
    emit(out, "kCombiningClassRanges", "CombiningClassRange",
         [f"{{0x{a:X}, 0x{b:X}, {c}}}," for a, b, c in combining], 5)
    emit_lower(out, "kLowerRuns", "kLowerPairs",
               lambda cp: probed[cp].lower if cp in probed else [cp])
    emit(out, "kDecompositions", "Decomposition",
         [f"{{0x{a:X}, 0x{b:X}, 0x{c:X}}}," for a, b, c in decompositions(probed)], 4)


def main():
    data = ROOT / "runtime/data"
    with open(data / "unicode_tables.inc", "w", encoding="utf-8") as out:
        write_python_tables(out)
    with open(data / "tokenizer_unicode_tables.inc", "w", encoding="utf-8") as out:
        write_tokenizer_tables(out, probe_library())


if __name__ == "__main__":
    main()

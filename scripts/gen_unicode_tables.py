#!/usr/bin/env python3
"""Generates runtime/data/unicode_tables.inc, the Unicode data of the tokenizer and the metrics.

The tables hold what Hugging Face's BERT tokenizer and the official SQuAD evaluation script
ask Python (unicodedata, str.lower, str.isalnum, str.isspace), so the C++ code agrees with
them for the Unicode version of the Python that runs this script. The build never runs it;
rerun it by hand and commit the result:
    python3 scripts/gen_unicode_tables.py > runtime/data/unicode_tables.inc
"""
import sys
import unicodedata

MAX_CODE_POINT = 0x10FFFF
HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)  # decomposed algorithmically by the tokenizer

# Character classes, as the tokenizers library's BertNormalizer (clean_text, strip_accents)
# and BertPreTokenizer see them; every code point not listed is kOther.
DROP, SPACE, PUNCT, MARK = "kDrop", "kSpace", "kPunct", "kMark"


def char_class(cp):
    """BertNormalizer's predicates in the order clean_text applies them (drop NUL, U+FFFD and
    the categories Cc, Cf and Co except \\t \\n \\r, then map whitespace to a space), then
    punctuation (ASCII symbol ranges or P*), then Mn (what strip_accents drops). Rust's
    char::is_whitespace (White_Space) and str.isspace() agree on every character that is not
    C*: Zs, U+2028 and U+2029."""
    char = chr(cp)
    category = unicodedata.category(char)
    if cp in (0, 0xFFFD):
        return DROP
    if char in "\t\n\r":
        return SPACE
    # The unicode_categories crate's is_other(), which clean_text asks, is Cc, Cf and Co:
    # unassigned code points (Cn) stay, and WordPiece makes them [UNK].
    if category in ("Cc", "Cf", "Co"):
        return DROP
    if char == " " or category == "Zs" or char.isspace():
        return SPACE
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return PUNCT
    if category.startswith("P"):
        return PUNCT
    if category == "Mn":
        return MARK
    return None


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


def lower_runs():
    """Single-code-point lower-case mappings as runs (first, last, stride, delta): every
    stride-th code point from first to last lower-cases to itself + delta. Multi-code-point
    mappings (str.lower of one character, as BertTokenizer lower-cases) are returned apart."""
    singles, multiples = [], []
    for cp in range(MAX_CODE_POINT + 1):
        lower = chr(cp).lower()
        if lower == chr(cp):
            continue
        if len(lower) == 1:
            singles.append((cp, ord(lower) - cp))
        else:
            multiples.append((cp, [ord(c) for c in lower]))
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
    return runs, multiples


def decompositions():
    """(code point, first, second or 0) for each canonical decomposition, one level deep."""
    entries = []
    for cp in range(MAX_CODE_POINT + 1):
        if cp in HANGUL_SYLLABLES:
            continue
        text = unicodedata.decomposition(chr(cp))
        if not text or text.startswith("<"):
            continue
        parts = [int(part, 16) for part in text.split()]
        assert len(parts) in (1, 2), hex(cp)
        entries.append((cp, parts[0], parts[1] if len(parts) == 2 else 0))
    return entries


def emit(name, element, rows, per_line):
    print(f"constexpr {element} {name}[] = {{")
    for start in range(0, len(rows), per_line):
        print("    " + " ".join(rows[start:start + per_line]))
    print("};")
    print()


def main():
    python = sys.version.split()[0]
    print(f"// Generated by scripts/gen_unicode_tables.py from Python {python}'s unicodedata")
    print(f"// (Unicode {unicodedata.unidata_version}); do not edit. Included by unicode_text.cpp,"
          " which defines the")
    print("// element types. Every table is sorted by code point.")
    print()
    classes = ranges_of(char_class)
    emit("kCharClassRanges", "CharClassRange",
         [f"{{0x{a:X}, 0x{b:X}, {c}}}," for a, b, c in classes], 4)
    combining = ranges_of(lambda cp: unicodedata.combining(chr(cp)) or None)
    emit("kCombiningClassRanges", "CombiningClassRange",
         [f"{{0x{a:X}, 0x{b:X}, {c}}}," for a, b, c in combining], 5)
    runs, multiples = lower_runs()
    emit("kLowerRuns", "LowerRun",
         [f"{{0x{a:X}, 0x{b:X}, {s}, {d}}}," for a, b, s, d in runs], 4)
    assert all(len(lower) == 2 for _, lower in multiples)
    emit("kLowerPairs", "LowerPair",
         [f"{{0x{cp:X}, {{0x{l[0]:X}, 0x{l[1]:X}}}}}," for cp, l in multiples], 4)
    emit("kDecompositions", "Decomposition",
         [f"{{0x{a:X}, 0x{b:X}, 0x{c:X}}}," for a, b, c in decompositions()], 4)
    properties = ranges_of(text_properties)
    emit("kTextPropertyRanges", "TextPropertyRange",
         [f"{{0x{a:X}, 0x{b:X}, {f}}}," for a, b, f in properties], 5)


if __name__ == "__main__":
    main()

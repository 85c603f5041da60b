// What the fuzz targets share. bertc's readers take paths, so each input is written to a file
// in a folder private to the process; the tokenizing targets also need a vocabulary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bertc::fuzz {

/// Writes `size` bytes at `data` to NAME in the process's scratch folder (created on first
/// use, removed at exit) and returns its path; the same NAME is overwritten by each input.
std::string writeInputFile(const uint8_t *data, size_t size, const std::string &name);

/// The scratch folder itself (for readers that take a folder, such as an HF config's).
const std::string &scratchFolder();

/// A small WordPiece vocab.txt (the special tokens, words, ## pieces, punctuation, accented
/// and CJK characters), written once: what the tokenizing targets encode with.
const std::string &sampleVocabPath();

} // namespace bertc::fuzz

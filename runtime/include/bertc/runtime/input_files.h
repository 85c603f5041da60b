// Reading the files a run is given (tables, SQuAD JSON, a checkpoint's trainer_state.json):
// every input opened without blocking and only when it is a regular file, a whole file as
// text up to its kind's size limit, its lines, and JSON parsed within bertc's limits
// (json_limits.h) with located errors. Each caller throws its own error type. Private to
// the runtime.
#pragma once

#include "bertc/runtime/json_limits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace bertc {

/// A kind of file read whole into memory, and the most bytes read of it (docs/training.md
/// lists them). safetensors data is not read whole; its header has its own limit
/// (safetensors.cpp).
struct FileLimit {
  uint64_t bytes;
  const char *kind;
};
inline constexpr FileLimit kDataFileLimit{uint64_t(1) << 30, "a data file"};
inline constexpr FileLimit kVocabFileLimit{uint64_t(64) << 20, "a vocabulary"};
/// A tokenizer_config.json is small; some list their added tokens, a few thousand lines.
inline constexpr FileLimit kTokenizerConfigLimit{uint64_t(16) << 20, "a tokenizer_config.json"};
inline constexpr FileLimit kMetricsLogLimit{uint64_t(1) << 30, "a metrics log"};
inline constexpr FileLimit kStateFileLimit{uint64_t(1) << 20, "a checkpoint's JSON file"};
/// A sharded checkpoint's model.safetensors.index.json: some 100 bytes per tensor.
inline constexpr FileLimit kSafetensorsIndexLimit{uint64_t(64) << 20, "a safetensors index"};

/// "1 GiB", "64 MiB".
inline std::string formatLimit(uint64_t bytes) {
  return bytes >= (uint64_t(1) << 30) ? std::to_string(bytes >> 30) + " GiB"
                                      : std::to_string(bytes >> 20) + " MiB";
}

/// "a FIFO", "a directory": what a file of mode `mode` (st_mode) that is not regular is.
inline const char *specialFileKind(mode_t mode) {
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

/// Opens the input file `path` for reading, as every input of a run is opened: with
/// O_NONBLOCK, so that open() returns at once where a FIFO would wait for a writer forever,
/// then only a regular file is kept, in blocking mode again. Sets `*bytes` to its size when
/// given. Throws Error "PATH: cannot open: REASON", or "PATH: is a FIFO, not a regular file"
/// (a directory, a device, a socket likewise).
template <class Error> int openInputFile(const std::string &path, uint64_t *bytes = nullptr) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat status;
  std::string problem;
  if (::fstat(fd, &status) != 0)
    problem = ": cannot open: " + std::string(std::strerror(errno));
  else if (!S_ISREG(status.st_mode))
    problem = ": is " + std::string(specialFileKind(status.st_mode)) + ", not a regular file";
  else if (int flags = ::fcntl(fd, F_GETFL); flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK))
    problem = ": cannot open: " + std::string(std::strerror(errno));
  if (!problem.empty()) {
    ::close(fd);
    throw Error(path + problem);
  }
  if (bytes)
    *bytes = uint64_t(status.st_size);
  return fd;
}

/// Checks that `path` opens as openInputFile opens it, for a reader that then opens it as a
/// stream (std::ifstream has no non-blocking open); throws Error as openInputFile does.
template <class Error> void requireInputFile(const std::string &path) {
  ::close(openInputFile<Error>(path));
}

/// The bytes of the file at `path` (openInputFile's). Throws Error "PATH: cannot open:
/// REASON" or "PATH: is a FIFO, not a regular file" as openInputFile does, "PATH: cannot
/// read: REASON" when reading it fails, and "PATH: larger than 1 MiB, the limit for KIND"
/// past `limit` (by its size, or where it grows while read, one chunk past the limit).
template <class Error> std::string readWholeFile(const std::string &path, FileLimit limit) {
  uint64_t size = 0;
  int fd = openInputFile<Error>(path, &size);
  if (size > limit.bytes) {
    ::close(fd);
    throw Error(path + ": larger than " + formatLimit(limit.bytes) + ", the limit for " +
                limit.kind);
  }
  std::string bytes;
  char chunk[64 * 1024];
  while (true) {
    ssize_t read = ::read(fd, chunk, sizeof chunk);
    if (read < 0 && errno == EINTR)
      continue;
    if (read <= 0 || bytes.size() + size_t(read) > limit.bytes) {
      std::string reason = read < 0 ? std::strerror(errno) : "";
      ::close(fd);
      if (read < 0)
        throw Error(path + ": cannot read: " + reason);
      if (read == 0)
        return bytes;
      throw Error(path + ": larger than " + formatLimit(limit.bytes) + ", the limit for " +
                  limit.kind);
    }
    bytes.append(chunk, size_t(read));
  }
}

/// Calls visit(line, content) for each LF-ended line of `text` (the last may lack its LF),
/// `line` 1-based and `content` without the LF.
template <class Visit> void forEachLine(std::string_view text, Visit visit) {
  size_t pos = 0;
  for (int64_t line = 1; pos < text.size(); ++line) {
    size_t newline = std::min(text.find('\n', pos), text.size());
    visit(line, text.substr(pos, newline - pos));
    pos = newline + 1;
  }
}

/// What a JSON error says, without nlohmann's "[json.exception.parse_error.101] ".
inline std::string jsonParseMessage(const nlohmann::json::exception &error) {
  std::string detail = error.what();
  size_t bracket = detail.find("] ");
  return bracket == std::string::npos ? detail : detail.substr(bracket + 2);
}

/// Parses one line of a JSONL file; `where` is "FILE:LINE". Throws Error
/// "FILE:LINE: column C: nesting deeper than 64 levels" (or a number out of range) before
/// parsing, and "FILE:LINE: malformed JSON: ..." for what the parser rejects.
template <class Error, class Json = nlohmann::json>
Json parseJsonLine(std::string_view line, const std::string &where) {
  if (std::optional<JsonLimitIssue> issue = findJsonLimitIssue(line))
    throw Error(where + ": column " + std::to_string(issue->column) + ": " + issue->what);
  try {
    return Json::parse(line);
  } catch (const nlohmann::json::exception &error) {
    throw Error(where + ": malformed JSON: " + jsonParseMessage(error));
  }
}

/// Parses the whole JSON file `path` whose bytes are `text`. Throws Error
/// "PATH:LINE:COLUMN: nesting deeper than 64 levels" (or a number out of range) before
/// parsing, and "PATH: malformed JSON: parse error at line L, column C: ..." after.
template <class Error, class Json = nlohmann::json>
Json parseJsonFile(std::string_view text, const std::string &path) {
  if (std::optional<JsonLimitIssue> issue = findJsonLimitIssue(text))
    throw Error(path + ":" + std::to_string(issue->line) + ":" + std::to_string(issue->column) +
                ": " + issue->what);
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception &error) {
    throw Error(path + ": malformed JSON: " + jsonParseMessage(error));
  }
}

} // namespace bertc

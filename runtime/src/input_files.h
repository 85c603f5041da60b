// Reading the files a run is given (tables, SQuAD JSON, a checkpoint's trainer_state.json):
// a whole file as text, and a JSON parse error as a message. Each caller throws its own
// error type. Private to the runtime.
#pragma once

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace bertc {

/// The bytes of the file at `path`. Throws Error "PATH: cannot open: REASON" when it cannot
/// be opened, and "PATH: cannot read: REASON" when reading it fails (a directory).
template <class Error> std::string readWholeFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  try {
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure &) {
    throw Error(path + ": cannot read: " + std::strerror(errno));
  }
}

/// What a JSON parse error says, without nlohmann's "[json.exception.parse_error.101] ".
inline std::string jsonParseMessage(const nlohmann::json::parse_error &error) {
  std::string detail = error.what();
  size_t bracket = detail.find("] ");
  return bracket == std::string::npos ? detail : detail.substr(bracket + 2);
}

} // namespace bertc

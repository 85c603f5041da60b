// Test helpers for the trainer driver tests: run the stand-in trainer (standin_trainer.cpp,
// 20 rows, batch 8 = 4 x 2 accumulation, so 3 optimizer steps per epoch) as a process in a
// scratch directory, write its data, and read back its metrics log and safetensors files.
#pragma once

#include "bertc/runtime/safetensors_shards.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace bertc::testing {

/// How a trainer process ended and what it printed.
struct RunResult {
  int exitCode;
  std::string out;
  std::string err;
};

/// Runs the stand-in trainer (or `trainer`) in `dir` with `args`, already shell-quoted
/// where needed.
inline RunResult runTrainer(const ScratchDir &dir, const std::string &args,
                            const char *trainer = BERTC_STANDIN_TRAINER) {
  std::string command = "cd '" + dir.file("") + "' && '" + trainer + "' " + args + " >'" +
                        dir.file("stdout") + "' 2>'" + dir.file("stderr") + "'";
  int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, readText(dir.file("stdout")),
          readText(dir.file("stderr"))};
}

/// 20 rows of 2..8 tokens; label 1 when the row's ids are mostly above 50.
inline std::string writeData(const ScratchDir &dir) {
  std::string text;
  for (int row = 0; row < 20; ++row) {
    std::string ids;
    int length = 2 + row % 7;
    for (int t = 0; t < length; ++t)
      ids += (t ? ", " : "") + std::to_string((row * 37 + t * 11) % 100);
    text += R"({"input_ids": [)" + ids + R"(], "label": )" + std::to_string(row % 3 != 0) + "}\n";
  }
  std::string path = dir.file("train.jsonl");
  writeText(path, text);
  return path;
}

/// The log's lines, each parsed, with the wall-clock "seconds" of the step lines removed
/// (evaluation lines have none).
inline std::vector<nlohmann::json> readLog(const std::string &path) {
  std::vector<nlohmann::json> lines;
  std::istringstream text(readText(path));
  for (std::string line; std::getline(text, line);) {
    lines.push_back(nlohmann::json::parse(line));
    if (lines.back().contains("eval_loss"))
      continue;
    EXPECT_TRUE(lines.back().contains("seconds")) << line;
    lines.back().erase("seconds");
  }
  return lines;
}

/// Every tensor of a checkpoint (a safetensors file, or a sharded one's index), by name, as
/// raw fp32 values.
inline std::map<std::string, std::vector<float>> readCheckpoint(const std::string &path) {
  ShardedSafetensorsReader reader(path);
  std::map<std::string, std::vector<float>> tensors;
  for (const auto &[name, entry] : reader.entries()) {
    int64_t numel = 1;
    for (int64_t dim : entry.shape)
      numel *= dim;
    tensors[name].resize(size_t(numel));
    reader.readF32(name, entry.shape, tensors[name].data());
  }
  return tensors;
}

} // namespace bertc::testing

// Test helpers: a fresh directory per test (removed afterwards) and whole-file text I/O.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace bertc::testing {

/// A directory unique to the running test, under the system temp directory.
class ScratchDir {
public:
  ScratchDir() {
    const ::testing::TestInfo *test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(test->test_suite_name()) + "-" + test->name();
    std::replace(name.begin(), name.end(), '/', '_'); // parameterized tests: "Suite/Name/0"
    path_ =
        std::filesystem::temp_directory_path() / ("bertc-" + name + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }

  /// Path of `name` inside the directory.
  std::string file(const std::string &name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

inline void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string readText(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// What `action` throws, or "(nothing thrown)".
template <class Action> std::string errorOf(Action action) {
  try {
    action();
  } catch (const std::exception &error) {
    return error.what();
  }
  return "(nothing thrown)";
}

} // namespace bertc::testing

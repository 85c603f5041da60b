// Opening a run's inputs (input_files.h): only regular files, and never by blocking in
// open(), whichever reader opens them (whole files, safetensors, PyTorch checkpoints).
#include "bertc/runtime/input_files.h"
#include "bertc/runtime/safetensors.h"
#include "bertc/runtime/torch_checkpoint.h"

#include "fifo_input.h"
#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

namespace bertc {
namespace {

using testing::errorOf;
using testing::FifoInput;
using testing::ScratchDir;

TEST(InputFiles, AFifoIsRefusedWithoutWaitingForAWriter) {
  ScratchDir dir;
  FifoInput fifo(dir.file("train.jsonl"));
  std::string refused = fifo.path() + ": is a FIFO, not a regular file";
  EXPECT_EQ(errorOf([&] { readWholeFile<std::runtime_error>(fifo.path(), kDataFileLimit); }),
            refused);
  EXPECT_EQ(errorOf([&] { SafetensorsReader reader(fifo.path()); }), refused);
  EXPECT_EQ(errorOf([&] { TorchCheckpointReader reader(fifo.path()); }), refused);
  EXPECT_EQ(errorOf([&] { looksLikeTorchCheckpoint(fifo.path()); }), refused);
}

TEST(InputFiles, OnlyRegularFilesAreRead) {
  ScratchDir dir;
  auto read = [](const std::string &path) {
    return errorOf([&] { readWholeFile<std::runtime_error>(path, kDataFileLimit); });
  };
  EXPECT_EQ(read(dir.file("")), dir.file("") + ": is a directory, not a regular file");
  EXPECT_EQ(read("/dev/zero"), "/dev/zero: is a character device, not a regular file");
  EXPECT_EQ(read(dir.file("absent.jsonl")),
            dir.file("absent.jsonl") + ": cannot open: No such file or directory");
  // A link to a regular file is that file.
  testing::writeText(dir.file("rows.jsonl"), "{}\n");
  std::filesystem::create_symlink(dir.file("rows.jsonl"), dir.file("link.jsonl"));
  EXPECT_EQ(readWholeFile<std::runtime_error>(dir.file("link.jsonl"), kDataFileLimit), "{}\n");
}

TEST(InputFiles, AFileOverItsLimitIsRefusedByItsSize) {
  ScratchDir dir;
  std::string path = dir.file("trainer_state.json");
  testing::writeText(path, "");
  std::filesystem::resize_file(path, kStateFileLimit.bytes + 1); // sparse: nothing written
  EXPECT_EQ(errorOf([&] { readWholeFile<std::runtime_error>(path, kStateFileLimit); }),
            path + ": larger than 1 MiB, the limit for a checkpoint's JSON file");
  std::filesystem::resize_file(path, kStateFileLimit.bytes);
  EXPECT_EQ(readWholeFile<std::runtime_error>(path, kStateFileLimit).size(), kStateFileLimit.bytes);
}

} // namespace
} // namespace bertc

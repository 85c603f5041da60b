// The PyTorch checkpoint reader on hand-written pickles in torch.save's older format (so
// that no PyTorch is needed): numbers beyond int64 are refused with the tensor's name, as
// torch.load refuses them, and MARKs and the memo count against the unpickler's bound.
#include "bertc/runtime/torch_checkpoint.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;

/// `value` as `width` little-endian bytes.
std::string littleEndian(uint64_t value, int width) {
  std::string bytes;
  for (int i = 0; i < width; ++i)
    bytes += char(value >> (8 * i));
  return bytes;
}

/// BINUNICODE `text`.
std::string text(const std::string &text) { return "X" + littleEndian(text.size(), 4) + text; }

/// GLOBAL module.name.
std::string global(const std::string &module, const std::string &name) {
  return "c" + module + "\n" + name + "\n";
}

/// BININT1 `value`.
std::string small(int value) { return "K" + std::string(1, char(value)); }

/// LONG1 of `bytes` (little-endian two's complement).
std::string long1(const std::string &bytes) {
  return "\x8a" + std::string(1, char(bytes.size())) + bytes;
}

/// The four floats 1, 2, 3, 4 as storage "0" of torch.save's older format, and a state dict
/// of one tensor "w" over it: its storage offset, its one size and its one stride (each a
/// pickled integer), and `prefix` run before the dict is made.
std::string legacyFile(const std::string &offset, const std::string &size,
                       const std::string &stride, const std::string &prefix = "") {
  std::string header = "\x80\x02" + small(1) + ".";
  std::string storage = "((" + text("storage") + global("torch", "FloatStorage") + text("0") +
                        text("cpu") + small(4) + "tQ";
  std::string stateDict = "\x80\x02" + prefix + "}" + text("w") +
                          global("torch._utils", "_rebuild_tensor_v2") + storage + offset + size +
                          "\x85" + stride + "\x85" + "tRs.";
  std::string keys = "\x80\x02]" + text("0") + "a.";
  float values[4] = {1, 2, 3, 4};
  std::string data = littleEndian(4, 8) + std::string(reinterpret_cast<char *>(values), 16);
  return header + header + header + stateDict + keys + data;
}

/// What reading tensor "w" ([`elements`]) from `bytes`, written to `path`, throws ("(nothing
/// thrown)" when it reads), and the values it read.
std::string readW(const std::string &path, const std::string &bytes, int64_t elements,
                  std::vector<float> *values = nullptr) {
  testing::writeText(path, bytes);
  std::vector<float> out(size_t(elements), 0.0f);
  std::string error =
      errorOf([&] { TorchCheckpointReader(path).readF32("w", {elements}, out.data()); });
  if (values)
    *values = out;
  return error;
}

TEST(TorchCheckpoint, ReadsAHandWrittenOlderFormatFile) {
  ScratchDir dir;
  std::string path = dir.file("pytorch_model.bin");
  std::vector<float> values;
  EXPECT_EQ(readW(path, legacyFile(small(0), small(4), small(1)), 4, &values), "(nothing thrown)");
  EXPECT_EQ(values, (std::vector<float>{1, 2, 3, 4}));
  // A LONG1 wider than 8 bytes whose other bytes only extend the sign is an int64: offset 1
  // in 9 bytes, stride 2 in 10.
  std::string one = littleEndian(1, 8) + '\0', two = littleEndian(2, 8) + std::string(2, '\0');
  EXPECT_EQ(readW(path, legacyFile(long1(one), small(2), long1(two)), 2, &values),
            "(nothing thrown)");
  EXPECT_EQ(values, (std::vector<float>{2, 4}));
}

// torch.load refuses an offset, size or stride beyond int64 ("Overflow when unpacking
// long"); read as 0, the offset 2^64 + 1 loaded element 0 and the stride 2^64 + 64 a
// tensor of element 0 four times.
TEST(TorchCheckpoint, NumbersBeyondInt64AreRefusedWithTheTensorsName) {
  ScratchDir dir;
  std::string path = dir.file("pytorch_model.bin");
  std::string past64 = littleEndian(1, 8) + '\x01';     // 2^64 + 1
  std::string stride = littleEndian(64, 8) + '\x01';    // 2^64 + 64
  std::string negative = std::string(8, '\0') + '\xfe'; // -2^65
  EXPECT_EQ(readW(path, legacyFile(long1(past64), small(4), small(1)), 4),
            path + ": tensor w: its storage offset does not fit in 64 bits");
  EXPECT_EQ(readW(path, legacyFile(small(0), small(4), long1(stride)), 4),
            path + ": tensor w: its stride in dimension 0 does not fit in 64 bits");
  EXPECT_EQ(readW(path, legacyFile(small(0), long1(negative), small(1)), 4),
            path + ": tensor w: its size in dimension 0 does not fit in 64 bits");
}

// MARKs, memo entries and values pushed again from the memo hold memory too: each counts
// against the bound of 2^20 that values have (a 50 MB flood of MARKs held 536 MB).
TEST(TorchCheckpoint, MarksAndTheMemoCountAgainstTheUnpicklersBound) {
  ScratchDir dir;
  std::string path = dir.file("pytorch_model.bin");
  const size_t flood = size_t(1) << 20;
  std::string bound = path + ": pickle: more than 1048576 values, MARKs and memo entries, far more "
                             "than a state dict's pickle holds";
  std::string marks(flood, '(');
  EXPECT_EQ(readW(path, legacyFile(small(0), small(4), small(1), marks), 4), bound);
  std::string memo = "}"; // LONG_BINPUT of one dict at 2^20 indices
  for (size_t i = 0; i < flood; ++i)
    memo += "r" + littleEndian(i, 4);
  EXPECT_EQ(readW(path, legacyFile(small(0), small(4), small(1), memo), 4), bound);
  std::string gets = "}q" + std::string(1, '\0'); // BINGET of it 2^20 times
  for (size_t i = 0; i < flood; ++i)
    gets += "h" + std::string(1, '\0');
  EXPECT_EQ(readW(path, legacyFile(small(0), small(4), small(1), gets), 4), bound);
}

} // namespace
} // namespace bertc

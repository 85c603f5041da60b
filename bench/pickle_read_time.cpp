// bertc_pickle_read_time: how long the PyTorch checkpoint reader (TorchCheckpointReader)
// takes to unpickle a large state-dict pickle, in torch.save's older format, written to a
// temporary file. Two shapes of the same size: one of small opcodes (FRAME, which makes no
// value: the cost per pickle byte) and one of a few long strings (the cost of bulk reads).
//   bertc_pickle_read_time [MB]     # default 300
// Prints a Markdown table: pickle, MB, seconds (best of 3), MB/s.
#include "bertc/runtime/torch_checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

/// `value` as `width` little-endian bytes.
std::string littleEndian(uint64_t value, int width) {
  std::string bytes;
  for (int i = 0; i < width; ++i)
    bytes += char(value >> (8 * i));
  return bytes;
}

std::string text(const std::string &value) { return "X" + littleEndian(value.size(), 4) + value; }

/// A file of torch.save's older format: three header pickles, the state dict {"w": a
/// tensor of one float} whose pickle starts with `filler` (opcodes that leave the stack as
/// it was), the storage keys, and the storage.
void writeCheckpoint(const std::string &path, const std::string &filler) {
  std::string header = "\x80\x02K\x01.";
  // Storage "0" of one float at offset 0, size (1,), stride (1,).
  std::string tensor = "ctorch._utils\n_rebuild_tensor_v2\n((" + text("storage") +
                       "ctorch\nFloatStorage\n" + text("0") + text("cpu") + "K\x01tQ" +
                       std::string("K\0", 2) + "K\x01\x85K\x01\x85tR";
  std::ofstream file(path, std::ios::binary);
  file << header << header << header << "\x80\x02" << filler << "}" << text("w") << tensor << "s."
       << "\x80\x02]" << text("0") << "a." << littleEndian(1, 8) << std::string(4, '\0');
}

/// `bytes` of FRAME opcodes (each 9 bytes: the opcode and a frame length).
std::string frames(size_t bytes) {
  std::string frame = "\x95" + littleEndian(0, 8), filler;
  filler.reserve(bytes);
  while (filler.size() + frame.size() <= bytes)
    filler += frame;
  return filler;
}

/// `bytes` of 1 MiB strings in one tuple (a MARK, the strings, TUPLE), which stays on the
/// stack under the dict.
std::string strings(size_t bytes) {
  std::string one = text(std::string(size_t(1) << 20, 'x')), filler = "(";
  filler.reserve(bytes + one.size());
  while (filler.size() + one.size() + 1 <= bytes)
    filler += one;
  return filler + "t";
}

/// Seconds the reader takes to open `path` (the state dict unpickled), best of 3.
double secondsToOpen(const std::string &path) {
  double best = 1e30;
  for (int run = 0; run < 3; ++run) {
    auto start = std::chrono::steady_clock::now();
    bertc::TorchCheckpointReader reader(path);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!reader.contains("w"))
      std::exit(1);
    best = std::min(best, seconds);
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  size_t megabytes = argc > 1 ? size_t(std::atol(argv[1])) : 300;
  const char *temp = std::getenv("TMPDIR");
  std::string path = std::string(temp ? temp : "/tmp") + "/bertc-pickle-read-time-" +
                     std::to_string(getpid()) + ".bin";
  std::printf("bertc_pickle_read_time: TorchCheckpointReader over a %zu MB state-dict pickle "
              "(best of 3)\n\n",
              megabytes);
  std::printf("| pickle | MB | seconds | MB/s |\n|---|---|---|---|\n");
  size_t bytes = megabytes << 20;
  for (auto [name, filler] : {std::pair<const char *, std::string>{"FRAME opcodes", frames(bytes)},
                              {"1 MiB strings", strings(bytes)}}) {
    writeCheckpoint(path, filler);
    double seconds = 0;
    try {
      seconds = secondsToOpen(path);
    } catch (const bertc::TorchCheckpointError &error) {
      std::fprintf(stderr, "%s\n", error.what());
      std::remove(path.c_str());
      return 1;
    }
    double size = double(filler.size()) / double(1 << 20);
    std::printf("| %s | %.0f | %.2f | %.0f |\n", name, size, seconds, size / seconds);
  }
  std::remove(path.c_str());
  return 0;
}

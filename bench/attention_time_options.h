// bertc_attention_time's command line (attention_time.cpp): the shape, precision, dropout
// and run counts it times, and whether it prints JSON and checks the kernels against each
// other.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace bertc::cuda {

/// What the program takes, printed after a bad command line.
inline const char *const kUsage =
    "usage: bertc_attention_time [--batch 32] [--seq 128,512] [--hidden 768] [--heads 12]\n"
    "         [--precision bf16|fp16|fp32] [--dropout 0.1] [--runs 20] [--warmup 5] [--json] "
    "[--check]\n";

/// A bad command line: the message, then the usage, and exit status 2 (0 for --help).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The options, with BERT-base's attention shapes as defaults.
struct Options {
  int64_t batch = 32;
  std::vector<int64_t> seqs{128, 512};
  int64_t hidden = 768, heads = 12;
  std::string precision = "bf16";
  float dropout = 0.1f;
  int64_t runs = 20, warmup = 5;
  bool json = false, check = false;
};

/// Options from argv; throws UsageError (an empty message for --help).
Options parseOptions(int argc, char **argv);

} // namespace bertc::cuda

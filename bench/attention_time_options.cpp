// Parses bertc_attention_time's command line (attention_time_options.h).
#include "attention_time_options.h"

#include "bertc/abi/kernel_workspace.h"

#include <cstdlib>
#include <sstream>

namespace bertc::cuda {
namespace {

/// The value of `flag` as an integer of at least `least`.
int64_t parseCount(const std::string &flag, const std::string &text, int64_t least) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < least)
    throw UsageError(flag + " takes an integer of at least " + std::to_string(least) + ", not '" +
                     text + "'");
  return value;
}

} // namespace

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h")
      throw UsageError("");
    if (flag == "--json" || flag == "--check") {
      (flag == "--json" ? options.json : options.check) = true;
      continue;
    }
    if (i + 1 == argc)
      throw UsageError("unknown option or missing value: " + flag);
    const std::string value = argv[++i];
    if (flag == "--batch") {
      options.batch = parseCount(flag, value, 1);
    } else if (flag == "--seq") {
      options.seqs.clear();
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');)
        options.seqs.push_back(parseCount(flag, item, 1));
    } else if (flag == "--hidden") {
      options.hidden = parseCount(flag, value, 1);
    } else if (flag == "--heads") {
      options.heads = parseCount(flag, value, 1);
    } else if (flag == "--precision") {
      if (value != "bf16" && value != "fp16" && value != "fp32")
        throw UsageError("--precision is bf16, fp16 or fp32, not '" + value + "'");
      options.precision = value;
    } else if (flag == "--dropout") {
      char *end = nullptr;
      options.dropout = std::strtof(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(options.dropout >= 0.0f && options.dropout < 1.0f))
        throw UsageError("--dropout takes a rate in [0, 1), not '" + value + "'");
    } else if (flag == "--runs") {
      options.runs = parseCount(flag, value, 1);
    } else if (flag == "--warmup") {
      options.warmup = parseCount(flag, value, 0);
    } else {
      throw UsageError("unknown option: " + flag);
    }
  }
  if (options.hidden % options.heads != 0 || options.hidden / options.heads > kMaxAttentionHeadDim)
    throw UsageError("--hidden must be --heads times a head dimension of at most " +
                     std::to_string(kMaxAttentionHeadDim));
  return options;
}

} // namespace bertc::cuda

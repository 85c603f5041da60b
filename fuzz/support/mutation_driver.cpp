// The fuzzing engine where libFuzzer is not available (a compiler other than clang): a
// deterministic mutation loop around the same LLVMFuzzerTestOneInput. It takes libFuzzer's
// flags of the same names, so the scripts run either engine:
//   fuzz_NAME [-runs=N] [-max_total_time=S] [-seed=N] [-timeout=S] [-max_len=N]
//             [-artifact_prefix=P] CORPUS_DIR_OR_FILE...
//  1. Every seed file runs once, as it is; given files alone (no folder), that is all (as
//     libFuzzer reproduces a crash).
//  2. Then, until -runs inputs or -max_total_time seconds: a seed chosen by a PRNG keyed by
//     -seed, changed by 1 to 4 mutations (bit flip, random byte, byte insert, range delete,
//     range duplicate, splice with another seed), cut to -max_len bytes.
// An input that crashes (a sanitizer report, an abort, an uncaught exception) or runs past
// -timeout seconds is written to P + "crash-RUN" (or "timeout-RUN") before the process dies.

#include <sanitizer/common_interface_defs.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;

struct Options {
  uint64_t runs = UINT64_MAX;
  double maxTotalTime = 0; ///< seconds; 0: no limit
  uint64_t seed = 1;
  unsigned timeout = 60; ///< seconds per input
  size_t maxLen = 4096;
  std::string artifactPrefix;
  std::vector<std::string> inputs;
};

/// The input being run and where to save it, kept where a signal handler can reach them.
const Bytes *current = nullptr;
uint64_t currentRun = 0;
std::string artifactPrefix;

/// Writes the current input as PREFIX + KIND + "-" + RUN; async-signal-safe.
void saveCurrentInput(const char *kind) {
  if (!current)
    return;
  char path[4096];
  std::snprintf(path, sizeof path, "%s%s-%llu", artifactPrefix.c_str(), kind,
                static_cast<unsigned long long>(currentRun));
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return;
  ssize_t written = ::write(fd, current->data(), current->size());
  ::close(fd);
  char line[4200];
  int length = std::snprintf(line, sizeof line, "mutation_driver: %s; input (%zd bytes) in %s\n",
                             kind, written, path);
  ssize_t ignored = ::write(STDERR_FILENO, line, size_t(length));
  (void)ignored;
}

void onCrashSignal(int signal) {
  saveCurrentInput("crash");
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void onTimeout(int) {
  saveCurrentInput("timeout");
  _exit(70);
}

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      size_t length = std::strlen(flag);
      return arg.compare(0, length, flag) == 0 ? arg.c_str() + length : nullptr;
    };
    if (const char *v = value("-runs="))
      options.runs = std::strtoull(v, nullptr, 10);
    else if (const char *v = value("-max_total_time="))
      options.maxTotalTime = std::strtod(v, nullptr);
    else if (const char *v = value("-seed="))
      options.seed = std::strtoull(v, nullptr, 10);
    else if (const char *v = value("-timeout="))
      options.timeout = unsigned(std::strtoul(v, nullptr, 10));
    else if (const char *v = value("-max_len="))
      options.maxLen = std::strtoull(v, nullptr, 10);
    else if (const char *v = value("-artifact_prefix="))
      options.artifactPrefix = v;
    else if (arg.rfind('-', 0) == 0)
      std::fprintf(stderr, "mutation_driver: ignoring %s\n", arg.c_str());
    else
      options.inputs.push_back(arg);
  }
  return options;
}

Bytes readFile(const std::filesystem::path &path) {
  std::ifstream file(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(file), {});
}

/// Every file named, and every file directly inside each folder named, in name order.
std::vector<Bytes> loadSeeds(const std::vector<std::string> &inputs) {
  std::vector<std::filesystem::path> files;
  for (const std::string &input : inputs) {
    if (!std::filesystem::is_directory(input)) {
      files.push_back(input);
      continue;
    }
    for (const auto &entry : std::filesystem::directory_iterator(input))
      if (entry.is_regular_file())
        files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Bytes> seeds;
  for (const auto &file : files)
    seeds.push_back(readFile(file));
  if (seeds.empty())
    seeds.push_back({});
  return seeds;
}

/// Changes `input` once, at random; `seeds` supply splices.
void mutate(Bytes &input, const std::vector<Bytes> &seeds, std::mt19937_64 &rng) {
  auto below = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
  size_t at = below(input.size() + 1);
  switch (rng() % 6) {
  case 0: // flip one bit
    if (!input.empty())
      input[below(input.size())] ^= uint8_t(1u << (rng() % 8));
    break;
  case 1: // overwrite one byte
    if (!input.empty())
      input[below(input.size())] = uint8_t(rng());
    break;
  case 2: // insert one byte
    input.insert(input.begin() + at, uint8_t(rng()));
    break;
  case 3: { // delete a range
    size_t length = std::min(input.size() - at, below(16) + 1);
    input.erase(input.begin() + at, input.begin() + at + length);
    break;
  }
  case 4: { // duplicate a range at another place
    if (input.empty())
      break;
    size_t from = below(input.size());
    size_t length = std::min(input.size() - from, below(64) + 1);
    Bytes copy(input.begin() + from, input.begin() + from + length);
    input.insert(input.begin() + at, copy.begin(), copy.end());
    break;
  }
  default: { // splice: this input's head, another seed's tail
    const Bytes &other = seeds[below(seeds.size())];
    size_t from = below(other.size() + 1);
    input.resize(at);
    input.insert(input.end(), other.begin() + from, other.end());
    break;
  }
  }
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  artifactPrefix = options.artifactPrefix;
  __sanitizer_set_death_callback([] { saveCurrentInput("crash"); });
  std::signal(SIGABRT, onCrashSignal);
  std::signal(SIGSEGV, onCrashSignal);
  std::signal(SIGALRM, onTimeout);
  std::vector<Bytes> seeds = loadSeeds(options.inputs);
  std::mt19937_64 rng(options.seed);
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto run = [&](const Bytes &input) {
    current = &input;
    alarm(options.timeout);
    LLVMFuzzerTestOneInput(input.data(), input.size());
    alarm(0);
    ++currentRun;
  };
  for (const Bytes &seed : seeds)
    if (currentRun < options.runs)
      run(seed);
  // As libFuzzer: files alone (no folder) are inputs to run once each, as reproducers.
  bool reproducing =
      !options.inputs.empty() &&
      std::none_of(options.inputs.begin(), options.inputs.end(),
                   [](const std::string &input) { return std::filesystem::is_directory(input); });
  while (!reproducing && currentRun < options.runs &&
         (options.maxTotalTime <= 0 || elapsed() < options.maxTotalTime)) {
    Bytes input = seeds[rng() % seeds.size()];
    for (uint64_t changes = 1 + rng() % 4; changes > 0; --changes)
      mutate(input, seeds, rng);
    if (input.size() > options.maxLen)
      input.resize(options.maxLen);
    run(input);
  }
  std::printf("Done %llu runs in %.0f second(s)\n", static_cast<unsigned long long>(currentRun),
              elapsed());
  return 0;
}

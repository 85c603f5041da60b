//===- OptimizerFlags.cpp - how and where bertc's AdamW runs --------------===//

#include "OptimizerFlags.h"

#include "bertc/Driver/ByteSize.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <unistd.h>

namespace cl = llvm::cl;

namespace bertc {

cl::OptionCategory &bertcOptions() {
  static cl::OptionCategory category("bertc options");
  return category;
}

namespace {

cl::opt<std::string> optimizerState("optimizer-state",
                                    cl::desc("AdamW moments of parameters of at least 4096 "
                                             "values: fp32 (default), 8bit (blockwise, as "
                                             "bitsandbytes' Adam8bit) or auto (whichever "
                                             "gives the fastest plan that fits)"),
                                    cl::init("fp32"), cl::cat(bertcOptions()));
cl::opt<std::string> fuseOptimizer(
    "fuse-optimizer",
    cl::desc("where AdamW updates each parameter: off (after the backward, default), on (in "
             "the backward, as soon as its gradient is complete, so no gradient region; needs "
             "the whole batch in one micro-step, no max_grad_norm and no fp16) or auto "
             "(whichever gives the fastest plan that fits)"),
    cl::init("off"), cl::cat(bertcOptions()));
cl::opt<std::string> offloadOptimizer(
    "offload-optimizer",
    cl::desc("where the fp32 master weights and AdamW state live: off (on the device, "
             "default), on (in host memory, where AdamW runs after the backward, as "
             "ZeRO-Offload: gradients go down and parameters up over PCIe each step) or auto "
             "(whichever gives the fastest plan that fits)"),
    cl::init("off"), cl::cat(bertcOptions()));
cl::opt<std::string>
    hostRam("host-ram",
            cl::desc("host memory what is offloaded (the optimizer, checkpoints, embedding "
                     "tables) may take, e.g. 16GB (default: what the machine has available)"),
            cl::value_desc("SIZE"), cl::cat(bertcOptions()));

/// The candidates of an off|on|auto flag, the preferred (off) first.
std::vector<bool> onOffCandidates(llvm::StringRef value) {
  if (value == "auto")
    return {false, true};
  return {value == "on"};
}

/// MemAvailable of /proc/meminfo in bytes, else the free pages.
int64_t availableHostMemory() {
  if (auto meminfo = llvm::MemoryBuffer::getFileAsStream("/proc/meminfo")) {
    llvm::SmallVector<llvm::StringRef> lines;
    (*meminfo)->getBuffer().split(lines, '\n');
    for (llvm::StringRef line : lines) {
      int64_t kibibytes = 0;
      if (line.consume_front("MemAvailable:") && line.consume_back(" kB") &&
          !line.trim().getAsInteger(10, kibibytes))
        return kibibytes * 1024;
    }
  }
  return int64_t(sysconf(_SC_AVPHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE));
}

} // namespace

std::optional<std::string> optimizerFlagsError() {
  if (!llvm::is_contained({"fp32", "8bit", "auto"}, optimizerState))
    return "--optimizer-state '" + optimizerState + "': expected fp32, 8bit or auto";
  for (const cl::opt<std::string> *flag : {&fuseOptimizer, &offloadOptimizer})
    if (!llvm::is_contained({"off", "on", "auto"}, flag->getValue()))
      return "--" + flag->ArgStr.str() + " '" + flag->getValue() + "': expected off, on or auto";
  if (fuseOptimizer == "on" && offloadOptimizer == "on")
    return std::string("--fuse-optimizer on and --offload-optimizer on exclude each other: "
                       "AdamW runs either in the device's backward or on the host after it");
  if (!hostRam.empty() && !parseByteSize(hostRam))
    return "--host-ram '" + hostRam + "' is not a size (e.g. 16GB)";
  return std::nullopt;
}

std::vector<std::string> optimizerStateCandidates() {
  if (optimizerState == "auto")
    return {"fp32", "8bit"};
  return {optimizerState};
}

std::vector<bool> fuseOptimizerCandidates() { return onOffCandidates(fuseOptimizer); }
std::vector<bool> offloadOptimizerCandidates() { return onOffCandidates(offloadOptimizer); }
bool fuseOptimizerPinned() { return fuseOptimizer == "on"; }
bool offloadOptimizerPinned() { return offloadOptimizer == "on"; }

int64_t hostRamBudget() {
  if (std::optional<int64_t> bytes = hostRam.empty() ? std::nullopt : parseByteSize(hostRam))
    return *bytes;
  return availableHostMemory();
}

} // namespace bertc

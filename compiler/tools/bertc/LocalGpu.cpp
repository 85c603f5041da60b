//===- LocalGpu.cpp - the GPU of the machine bertc runs on ----------------===//

#include "LocalGpu.h"

#include "bertc/Analysis/DeviceModel.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

namespace bertc {

std::optional<LocalGpu> parseNvidiaSmiGpu(llvm::StringRef nvidiaSmiOutput) {
  std::optional<LocalGpu> oldest;
  int gpus = 0;
  llvm::SmallVector<llvm::StringRef> lines;
  nvidiaSmiOutput.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    auto [name, capability] = line.rsplit(',');
    auto [major, minor] = capability.trim().split('.');
    unsigned majorNumber = 0, minorNumber = 0;
    if (name.trim().empty() || major.getAsInteger(10, majorNumber) ||
        minor.getAsInteger(10, minorNumber) || minorNumber > 9)
      continue;
    ++gpus;
    const int number = int(majorNumber * 10 + minorNumber);
    if (!oldest || number < oldest->capability)
      oldest = LocalGpu{name.trim().str(), number};
  }
  if (oldest)
    oldest->gpus = gpus;
  return oldest;
}

std::optional<LocalGpu> localGpu() {
  static const std::optional<LocalGpu> found = []() -> std::optional<LocalGpu> {
    llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName("nvidia-smi");
    llvm::SmallString<128> output;
    if (!program || llvm::sys::fs::createTemporaryFile("bertc-nvidia-smi", "txt", output))
      return std::nullopt;
    llvm::FileRemover removeOutput(output);
    std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(output),
                                                  llvm::StringRef("")};
    llvm::StringRef args[] = {*program, "--query-gpu=name,compute_cap", "--format=csv,noheader"};
    if (llvm::sys::ExecuteAndWait(*program, args, std::nullopt, redirects,
                                  /*SecondsToWait=*/20) != 0)
      return std::nullopt;
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text = llvm::MemoryBuffer::getFile(output);
    return text ? parseNvidiaSmiGpu((*text)->getBuffer()) : std::nullopt;
  }();
  return found;
}

std::optional<std::string> archForCapability(int capability) {
  for (int arch = capability; arch >= 0; --arch)
    if (gpuDeviceModel("sm_" + std::to_string(arch)))
      return "sm_" + std::to_string(arch);
  return std::nullopt;
}

} // namespace bertc

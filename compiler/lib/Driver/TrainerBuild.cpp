//===- TrainerBuild.cpp - compiling a generated trainer -------------------===//
//
// Runs the C++ compiler bertc was built with (and nvcc, for the cuda target) on the
// generated source, against the runtime's headers and static libraries (their paths are
// fixed at bertc's build).
//
//===----------------------------------------------------------------------===//

#include "bertc/Driver/TrainerBuild.h"

#include "bertc/Driver/RuntimeLocations.h"
#include "llvm/Support/Program.h"

#include <optional>
#include <string>
#include <vector>

namespace bertc {

namespace {

/// Runs `args` (the program first), its output to `logPath`.
llvm::Error runCompiler(const std::vector<std::string> &args, llvm::StringRef logPath) {
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string message;
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath, logPath};
  int status = llvm::sys::ExecuteAndWait(args.front(), argRefs, std::nullopt, redirects, 0, 0,
                                         &message);
  if (status != 0)
    return llvm::createStringError(
        "building the trainer failed (" +
        (message.empty() ? "exit code " + std::to_string(status) : message) +
        "); the compiler's output is in " + logPath.str());
  return llvm::Error::success();
}

} // namespace

llvm::Error buildCpuTrainer(llvm::StringRef source, llvm::StringRef output,
                            llvm::StringRef logPath) {
  std::vector<std::string> args = {runtime_locations::kCxxCompiler,
                                   "-std=c++20",
                                   "-O2",
                                   "-I",
                                   runtime_locations::kIncludeDir,
                                   source.str(),
                                   "-o",
                                   output.str()};
  for (const char *library : runtime_locations::kLinkLibraries)
    args.push_back(library);
  args.push_back("-lpthread");
  return runCompiler(args, logPath);
}

bool cudaTargetAvailable() { return *runtime_locations::kNvcc != '\0'; }

llvm::Error buildCudaTrainer(llvm::StringRef source, llvm::StringRef arch,
                             llvm::StringRef object, llvm::StringRef output,
                             llvm::StringRef logPath) {
  std::string computeArch = "compute_" + arch.drop_front(3).str();
  if (llvm::Error error =
          runCompiler({runtime_locations::kNvcc, "-std=c++20", "-O2",
                       "-gencode=arch=" + computeArch + ",code=" + arch.str(), "-I",
                       runtime_locations::kIncludeDir, "-c", source.str(), "-o", object.str()},
                      logPath))
    return error;
  std::vector<std::string> args = {runtime_locations::kCxxCompiler, object.str(), "-o",
                                   output.str()};
  for (const char *library : runtime_locations::kCudaLinkLibraries)
    args.push_back(library);
  args.push_back("-lpthread");
  return runCompiler(args, logPath);
}

} // namespace bertc

// Kernel launches on the simulated device. BERTC_LAUNCH (runtime/cuda/launch.cuh) expands
// to launchKernel(...) here and to kernel<<<...>>>(...) under nvcc.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <tuple>

namespace bertc::sim {

/// What `<<<grid, block, sharedBytes, stream>>>` says, and the kernel's name for reports.
struct LaunchConfig {
  const char *kernel;
  dim3 grid, block;
  size_t sharedBytes;
  cudaStream_t stream;
};

/// Runs threadBody(context) once per thread of the grid, as the launch's configuration
/// says, on the stream. A configuration a GPU refuses sets the last error and runs nothing.
/// The threads may read the contextBytes at context (the launch's arguments). A capturing
/// stream keeps copyContext(context) for the graph, as a captured launch keeps its
/// arguments' values.
void launch(const LaunchConfig &config, void (*threadBody)(const void *), const void *context,
            size_t contextBytes, std::shared_ptr<const void> (*copyContext)(const void *));

/// Launches `kernel`, a callable that calls the kernel with its arguments (so a template
/// kernel's arguments are deduced from the call's, as nvcc deduces them). Every thread gets
/// its own copy of the arguments, as every GPU thread has its own parameters.
template <typename Kernel, typename... Args>
void launchKernel(const LaunchConfig &config, Kernel kernel, Args... arguments) {
  struct Call {
    Kernel kernel;
    std::tuple<Args...> arguments;
    static void run(const void *context) {
      const Call &call = *static_cast<const Call *>(context);
      std::apply(call.kernel, call.arguments);
    }
    static std::shared_ptr<const void> copy(const void *context) {
      return std::make_shared<Call>(*static_cast<const Call *>(context));
    }
  };
  Call call{kernel, {arguments...}};
  launch(config, &Call::run, &call, sizeof call, &Call::copy);
}

} // namespace bertc::sim

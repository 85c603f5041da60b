// Kernel launches (launch.h): the configuration checked as a GPU checks it (and a device
// older than the kernels' oldest architecture refused, as a GPU without their image
// refuses them), then the blocks run one after another, at once or, on a capturing
// stream, when the graph runs.
// They run last block first: a GPU promises no order, and a kernel that counted on the
// launch order (block 0 first, say) fails here rather than only on some GPU.
#include "access_checks.h"
#include "bertc/cuda_sim/device_memory.h"
#include "block_scheduler.h"
#include "graph_capture.h"
#include "launch_limits.h"
#include "runtime_errors.h"
#include "streams.h"

namespace bertc::sim {

namespace {
bool validConfiguration(const LaunchConfig &config) {
  const dim3 &block = config.block, &grid = config.grid;
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  return threads >= 1 && threads <= unsigned(kMaxThreadsPerBlock) &&
         block.z <= unsigned(kMaxBlockDimZ) && grid.x >= 1 && grid.y >= 1 && grid.z >= 1 &&
         grid.x <= unsigned(kMaxGridDimX) && grid.y <= unsigned(kMaxGridDimYZ) &&
         grid.z <= unsigned(kMaxGridDimYZ) && config.sharedBytes <= kMaxSharedBytesPerBlock;
}

/// Runs every block of a checked launch; the context is the launch's argument bytes.
void runGrid(const LaunchConfig &config, void (*threadBody)(const void *), const void *context,
             size_t contextBytes) {
  if (stickyError())
    return;
  checksBeginLaunch(context, contextBytes);
  const uint64_t columns = config.grid.x, rows = config.grid.y;
  for (uint64_t blockIndex = columns * rows * config.grid.z; blockIndex-- > 0;) {
    const unsigned x = unsigned(blockIndex % columns), y = unsigned(blockIndex / columns % rows),
                   z = unsigned(blockIndex / (columns * rows));
    checksBeginBlock(blockIndex);
    if (!runBlock(config, {x, y, z}, threadBody, context))
      return;
  }
}

} // namespace

void launch(const LaunchConfig &config, void (*threadBody)(const void *), const void *context,
            size_t contextBytes, std::shared_ptr<const void> (*copyContext)(const void *)) {
  if (stickyError())
    return;
  if (computeCapability() < kOldestKernelArch) {
    recordResult(cudaErrorNoKernelImageForDevice);
    return;
  }
  if (!validConfiguration(config)) {
    recordResult(cudaErrorInvalidConfiguration);
    return;
  }
  if (!isValidStream(config.stream)) {
    recordResult(cudaErrorInvalidResourceHandle);
    return;
  }
  if (!isCapturing(config.stream)) {
    runGrid(config, threadBody, context, contextBytes);
    return;
  }
  submit(config.stream, cudaGraphNodeTypeKernel, [=, arguments = copyContext(context)] {
    runGrid(config, threadBody, arguments.get(), contextBytes);
  });
}

} // namespace bertc::sim

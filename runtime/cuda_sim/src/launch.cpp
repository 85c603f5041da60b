// Kernel launches (launch.h): the configuration checked as a GPU checks it, then the
// blocks run one after another, each finding its shared memory full of garbage.
#include "block_scheduler.h"
#include "launch_limits.h"
#include "runtime_errors.h"
#include "streams.h"

#include <cstring>

// The bounds of the section that holds every __shared__ variable (device_code.h); weak,
// for programs whose kernels declare none.
extern "C" char __start_bertc_sim_shared[] __attribute__((weak));
extern "C" char __stop_bertc_sim_shared[] __attribute__((weak));

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

void fillSharedMemoryWithGarbage() {
  if (__start_bertc_sim_shared)
    std::memset(__start_bertc_sim_shared, 0xff,
                size_t(__stop_bertc_sim_shared - __start_bertc_sim_shared));
}
} // namespace

void launch(const LaunchConfig &config, void (*threadBody)(void *), void *context) {
  if (stickyError())
    return;
  if (!validConfiguration(config)) {
    recordResult(cudaErrorInvalidConfiguration);
    return;
  }
  if (!isValidStream(config.stream)) {
    recordResult(cudaErrorInvalidResourceHandle);
    return;
  }
  for (unsigned z = 0; z < config.grid.z; ++z)
    for (unsigned y = 0; y < config.grid.y; ++y)
      for (unsigned x = 0; x < config.grid.x; ++x) {
        fillSharedMemoryWithGarbage();
        if (!runBlock(config, {x, y, z}, threadBody, context))
          return;
      }
}

} // namespace bertc::sim

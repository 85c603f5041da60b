// The simulated device's memory checkers, in the role compute-sanitizer plays on a GPU.
// The kernels are compiled with the compiler's address-sanitizer instrumentation in its
// outlined form (a call before every load and store, BERTC_CUDA_SIM_CHECK_FLAGS), and the
// calls land here. Inside a kernel, each access is checked against:
// - bounds: it must lie in one live cudaMalloc allocation, in host memory registered
//   mapped (cudaHostRegisterMapped), in shared memory, on the thread's own stack, or be a
//   read of its coordinates or of the launch's arguments; anything else (past an
//   allocation's end, another host pointer) is an out-of-bounds access, and the thread is
//   stopped before it happens;
// - shared memory: a read of bytes no thread of the block has written; two threads
//   touching the same bytes between two barriers, one of them writing, unless both are
//   lanes of one warp with a __syncwarp of the whole warp between them;
// - global memory: two threads of one launch writing the same address with no barrier
//   between them (two blocks never have one), unless both are atomics.
// Each finding is a device fault naming the kernel, block, thread and address. The
// checks are on unless the environment sets BERTC_SIM_CHECKS=0.
#pragma once

#include "bertc/cuda_sim/device_code.h"
#include "bertc/cuda_sim/launch.h"

#include <cstddef>
#include <cstdint>

namespace bertc::sim {

/// Whether the checks run (BERTC_SIM_CHECKS is not 0).
bool accessChecksEnabled();

/// Called by the scheduler: a launch begins (its threads may read its arguments); a block
/// begins; a barrier releases the block; thread `index` of the block runs now on the
/// stack [stackLow, stackHigh).
void checksBeginLaunch(const void *arguments, size_t argumentBytes);
void checksBeginBlock(uint64_t blockIndex);
void checksBarrier();
/// Every lane of warp `warp` of the block met in a __syncwarp (a partial mask orders
/// nothing here: the checks stay on the safe side).
void checksWarpSynced(unsigned warp);
void checksRunThread(const ThreadCoordinates *coordinates, unsigned index, const void *stackLow,
                     const void *stackHigh);
/// Host code runs now (between threads, or after the launch): nothing is checked.
void checksLeaveThread();

/// Checks the running thread's atomic read-modify-write of `bytes` at `address`: its bounds,
/// as any access's; no write is recorded, since the threads of every block may update the
/// same word.
void checkAtomicAccess(const void *address, size_t bytes);

/// While it lives, the running thread's accesses are not checked: the simulator's own code
/// runs in a kernel's thread when the kernel calls it (a barrier, a shuffle), and may run
/// instrumented copies of library templates (one copy of each is kept at link time). It
/// restores the thread's checks when the simulator returns to the kernel, even after the
/// thread waited and other threads ran.
class ChecksPaused {
public:
  ChecksPaused();
  ~ChecksPaused();
  ChecksPaused(const ChecksPaused &) = delete;
  ChecksPaused &operator=(const ChecksPaused &) = delete;

private:
  const ThreadCoordinates *coordinates_;
  unsigned index_;
  const void *stackLow_, *stackHigh_;
};

} // namespace bertc::sim

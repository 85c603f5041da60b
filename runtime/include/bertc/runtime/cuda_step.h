// What a generated CUDA trainer's steps (CudaSteps, bertc/abi/trainer.h) queue their work
// with. StepContext::arena is the device arena there.
#pragma once

#include "bertc/abi/trainer.h"
#include "bertc/runtime/cuda_gemm.h"
#include "bertc/runtime/cuda_kernels.h"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace bertc::cuda {

/// Takes each parameter's gradient from the device as soon as the backward has completed
/// it (an offloaded optimizer's last micro-step of an optimizer step).
class GradientStreamer {
public:
  virtual ~GradientStreamer() = default;
  /// The work queued on the step's stream so far completes TrainerPlan::params[param]'s
  /// gradient.
  virtual void gradientComplete(size_t param) = 0;
};

/// The device resources of a run, set up once before step 1.
struct StepDevice {
  cudaStream_t stream;           ///< every launch of a step is queued here, in order
  LinearGemms *gemms;            ///< on `stream`, its workspace at CudaSteps::gemmWorkspaceOffset
  const AdamWChunk *adamwChunks; ///< device copy of adamwChunks(CudaSteps::adamwParameters)
  int64_t adamwChunkCount;
  /// The column sums' kColumnSumTickets tickets (abi/kernel_workspace.h), zeroed before step 1.
  unsigned *columnSumTickets;
  GradientStreamer *gradients = nullptr; ///< set for the micro-steps that stream gradients
  /// The arena's host mirror, whose TrainerPlan::hostActivations are page-locked: where
  /// bert.offload copies a checkpoint down and bert.reload copies it back from.
  std::byte *hostArena = nullptr;
  /// Where the device sees the host mirror's TrainerPlan::hostParameters, mapped: a gather
  /// reads table rows at hostMapped + the table's arena offset (the address of the
  /// mirror's byte 0 as the device sees it, whether or not the device maps byte 0).
  std::byte *hostMapped = nullptr;
};

/// Called by an offloaded optimizer's micro-step right after the op that completes
/// TrainerPlan::params[param]'s gradient; nothing unless the runner streams this step's.
inline void streamGradient(const StepDevice &device, size_t param) {
  if (device.gradients)
    device.gradients->gradientComplete(param);
}

} // namespace bertc::cuda

// What the trainer's driver does for mixed precision on the host: keep the 16-bit working
// copies of the parameters equal to their fp32 masters once these are set. (The loss
// scaling around the optimizer step is the runner's: step_runner.h.)
#pragma once

#include "bertc/abi/trainer.h"

namespace bertc {

/// Rounds every 16-bit parameter's fp32 master into its working copy (after
/// initialisation, --init or a resume wrote the masters); a workingCopyOnly parameter has
/// none, and its working copy was written with its values.
void writeWorkingCopies(const TrainerPlan &plan, std::byte *arena);

} // namespace bertc

// The simulated device's stand-in for CUDA's cuda_runtime.h (which nvcc includes in every
// .cu file, as the simulated build does with -include): the runtime API and device code.
#pragma once

#include "bertc/cuda_sim/device_code.h"
#include <cuda_runtime_api.h>

// BERTC_HOST_DEVICE marks a function that both the host and CUDA device code call: the
// CPU kernels and their CUDA twins share such helpers so that both compute the same bits.
#pragma once

#if defined(__CUDACC__)
#define BERTC_HOST_DEVICE __host__ __device__
#else
#define BERTC_HOST_DEVICE
#endif

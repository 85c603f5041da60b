// The simulated device's stand-in for CUDA's library_types.h: the data types cuBLASLt
// descriptors name, with NVIDIA's enumerator values.
#pragma once

typedef enum cudaDataType_t {
  CUDA_R_16F = 2,
  CUDA_R_32F = 0,
  CUDA_R_64F = 1,
  CUDA_R_16BF = 14,
  CUDA_R_8I = 3,
  CUDA_R_32I = 10,
} cudaDataType_t;

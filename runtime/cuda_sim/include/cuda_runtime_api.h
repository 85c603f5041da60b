// The simulated device's stand-in for CUDA's cuda_runtime_api.h: the runtime API bertc
// calls, with NVIDIA's names, enumerator values and documented semantics, executed on the
// host (src/). Device memory is host memory owned by the simulated device, whose capacity
// is fixed at start-up (device_memory.h); streams run their work when it is queued, which
// is one valid order of an in-order stream.
#pragma once

#include "library_types.h"

#include <cstddef>

typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalAddress = 700,
  cudaErrorHostMemoryAlreadyRegistered = 712,
  cudaErrorHostMemoryNotRegistered = 713,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719,
} cudaError_t;

typedef enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
} cudaMemcpyKind;

typedef enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
} cudaDeviceAttr;

struct CUstream_st;
typedef struct CUstream_st *cudaStream_t;

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
struct CUevent_st;
typedef struct CUevent_st *cudaEvent_t;
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int major;
  int minor;
  int multiProcessorCount;
};

cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *properties, int device);
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attribute, int device);
cudaError_t cudaDeviceSynchronize();

cudaError_t cudaMalloc(void **pointer, size_t bytes);
cudaError_t cudaFree(void *pointer);
cudaError_t cudaMemGetInfo(size_t *freeBytes, size_t *totalBytes);
cudaError_t cudaMemcpy(void *to, const void *from, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *to, const void *from, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void *pointer, int value, size_t bytes);

/// cudaHostRegister's flags: the default (page-locked, portable across nothing more).
constexpr unsigned cudaHostRegisterDefault = 0;
/// Page-locks host memory for asynchronous copies. The simulated device keeps the ranges
/// and refuses device memory, an empty range, unknown flags and overlaps, as CUDA does.
cudaError_t cudaHostRegister(void *pointer, size_t bytes, unsigned flags);
cudaError_t cudaHostUnregister(void *pointer);
cudaError_t cudaMemsetAsync(void *pointer, int value, size_t bytes, cudaStream_t stream = nullptr);

cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

/// Events. The simulated device runs each launch and copy when it is queued, so an event
/// is complete once recorded and a wait on one returns at once; the handles are checked.
/// cudaEventSynchronize may be called from any host thread, as CUDA allows.
/// cudaEventElapsedTime gives the host time between the two records: the time the queued
/// work took on the CPU (benchmarks run on the simulated device as a smoke test).
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *milliseconds, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);

cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);

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
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorNoKernelImageForDevice = 209,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalState = 401,
  cudaErrorIllegalAddress = 700,
  cudaErrorHostMemoryAlreadyRegistered = 712,
  cudaErrorHostMemoryNotRegistered = 713,
  cudaErrorMisalignedAddress = 716,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureWrongThread = 908,
  cudaErrorGraphExecUpdateFailure = 910,
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

/// A kernel's attributes (the fields bertc reads). The simulated device runs every kernel
/// as compiled for its own architecture, as a build for that architecture would
/// (binaryVersion is its compute capability), from PTX of that architecture or of the older
/// one BERTC_SIM_PTX_ARCH names (ptxVersion); the resource figures are CUDA's limits
/// (maxThreadsPerBlock) or unknown (0).
struct cudaFuncAttributes {
  size_t sharedSizeBytes;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
};
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attributes, const void *function);

cudaError_t cudaMalloc(void **pointer, size_t bytes);
cudaError_t cudaFree(void *pointer);
cudaError_t cudaMemGetInfo(size_t *freeBytes, size_t *totalBytes);
cudaError_t cudaMemcpy(void *to, const void *from, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *to, const void *from, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void *pointer, int value, size_t bytes);

/// cudaHostRegister's flags: the default (page-locked, portable across nothing more), and
/// mapped into the device's address space (kernels may read and write it in place).
constexpr unsigned cudaHostRegisterDefault = 0;
constexpr unsigned cudaHostRegisterMapped = 2;
/// Page-locks host memory for asynchronous copies. The simulated device keeps the ranges
/// and refuses device memory, an empty range, unknown flags and overlaps, as CUDA does.
cudaError_t cudaHostRegister(void *pointer, size_t bytes, unsigned flags);
cudaError_t cudaHostUnregister(void *pointer);
/// The device's address of mapped host memory (flags 0): with unified addressing, the host
/// address itself. Refuses memory not registered with cudaHostRegisterMapped.
cudaError_t cudaHostGetDevicePointer(void **device, void *host, unsigned flags);
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

/// Stream capture and CUDA graphs (src/graph_capture.cpp, src/graph_exec.cpp). While a
/// stream captures, the kernel launches, cudaMemsetAsync, device-to-device or page-locked
/// cudaMemcpyAsync and cublasLtMatmul queued on it become the graph's nodes, in order, and
/// run only when an executable graph made from it is launched. Synchronising the capturing
/// stream, a copy with pageable host memory on it, and (unless the capture is relaxed) a
/// synchronous copy, fill, allocation or device synchronisation fail with
/// cudaErrorStreamCaptureUnsupported and invalidate the capture, as CUDA's do. Events are
/// not captured: cudaEventRecord and cudaStreamWaitEvent on a capturing stream act at once.
typedef enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
} cudaStreamCaptureMode;

typedef enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
} cudaStreamCaptureStatus;

typedef enum cudaGraphNodeType {
  cudaGraphNodeTypeKernel = 0x00,
  cudaGraphNodeTypeMemcpy = 0x01,
  cudaGraphNodeTypeMemset = 0x02,
  cudaGraphNodeTypeGraph = 0x04,
} cudaGraphNodeType;

typedef enum cudaGraphExecUpdateResult {
  cudaGraphExecUpdateSuccess = 0x0,
  cudaGraphExecUpdateError = 0x1,
  cudaGraphExecUpdateErrorTopologyChanged = 0x2,
  cudaGraphExecUpdateErrorNodeTypeChanged = 0x3,
} cudaGraphExecUpdateResult;

struct CUgraph_st;
typedef struct CUgraph_st *cudaGraph_t;
struct CUgraphExec_st;
typedef struct CUgraphExec_st *cudaGraphExec_t;
struct CUgraphNode_st;
typedef struct CUgraphNode_st *cudaGraphNode_t;

/// What cudaGraphExecUpdate reports: the result, and the nodes it concerns (or null).
typedef struct cudaGraphExecUpdateResultInfo_st {
  cudaGraphExecUpdateResult result;
  cudaGraphNode_t errorNode;
  cudaGraphNode_t errorFromNode;
} cudaGraphExecUpdateResultInfo;

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus *status);
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes);
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType *type);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *graphExec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
/// Gives graphExec the parameters of graph's nodes when graph has as many nodes of the same
/// types in the same order; otherwise cudaErrorGraphExecUpdateFailure, with the reason in
/// resultInfo, and graphExec unchanged.
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t graphExec, cudaGraph_t graph,
                                cudaGraphExecUpdateResultInfo *resultInfo);
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);

cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);

// The CUDA target's StepRunner (step_runner.h): the generated steps (CudaSteps) run on
// one device arena, allocated once after the device is found to hold it, on one stream.
// The driver's host arena is a mirror with the same layout; the runner copies between the
// two only at the points step_runner.h lists: parameters, masters and moments once at the
// start and before saves, each micro-batch's inputs, its loss, the eval logits, fp16's
// overflow flag and, with clipping, the gradient norm. The arena's host-resident end
// (TrainerPlan::hostResident) never leaves the host mirror: the device arena ends where it
// begins. It holds frozen 16-bit parameters' fp32 masters, offloaded checkpoints' host
// copies (page-locked: the steps copy them down and back up) and, with the optimizer
// offloaded, the masters and moments: then the gradients come down and the parameters go
// back up each optimizer step (host_optimizer.h). Micro-steps run as one CUDA graph each
// (step_graph.h), except the first (a warm-up), those that stream gradients to the offloaded
// optimizer (its events and host thread work beside the step) and evaluation steps (they copy the
// logits to pageable host memory and wait).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_device_arch.h"
#include "bertc/runtime/cuda_memory.h"
#include "bertc/runtime/cuda_step.h"
#include "bertc/runtime/step_runner.h"

#include "event_op_times.h"
#include "host_optimizer.h"
#include "step_graph.h"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace bertc {
namespace {

using cuda::AdamWChunk;

/// "5368709120 bytes (5.00 GiB)".
std::string bytesText(size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%zu bytes (%.2f GiB)", bytes,
                double(bytes) / double(size_t(1) << 30));
  return text;
}

/// The host mirror of the arena. It is mapped, not allocated: the driver only ever touches
/// the pages of the parameters, masters, moments and input slots, so the activations'
/// share of the range (most of it) is never backed by host memory.
class HostMirror {
public:
  explicit HostMirror(size_t bytes) : bytes_(std::max<size_t>(bytes, 1)) {
    void *mapped = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED)
      throw ArenaAllocationError("cannot map the arena's host mirror: " + bytesText(bytes_));
    base_ = static_cast<std::byte *>(mapped);
  }
  ~HostMirror() { ::munmap(base_, bytes_); }
  HostMirror(const HostMirror &) = delete;
  HostMirror &operator=(const HostMirror &) = delete;
  std::byte *data() const { return base_; }

private:
  size_t bytes_;
  std::byte *base_ = nullptr;
};

// Device resources are released without checks: a teardown after an error must not
// throw again.
struct DeviceFree {
  void operator()(std::byte *pointer) const { (void)cudaFree(pointer); }
};
using DeviceBuffer = std::unique_ptr<std::byte, DeviceFree>;
struct StreamDestroy {
  void operator()(cudaStream_t stream) const { (void)cudaStreamDestroy(stream); }
};
using Stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy>;

/// Host memory page-locked (cudaHostRegister), and where asked mapped into the device's
/// address space, from pin() until destroyed.
class PinnedRange {
public:
  PinnedRange() = default;
  ~PinnedRange() {
    if (begin_)
      (void)cudaHostUnregister(begin_);
  }
  PinnedRange(const PinnedRange &) = delete;
  PinnedRange &operator=(const PinnedRange &) = delete;
  void pin(std::byte *begin, size_t bytes, bool mapped) {
    if (bytes == 0)
      return;
    BERTC_CUDA_CHECK(
        cudaHostRegister(begin, bytes, mapped ? cudaHostRegisterMapped : cudaHostRegisterDefault));
    begin_ = begin;
  }
  /// The device's address of the range's byte `offset`.
  std::byte *onDevice(size_t offset) const {
    void *mapped = nullptr;
    BERTC_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, begin_ + offset, 0));
    return static_cast<std::byte *>(mapped);
  }

private:
  std::byte *begin_ = nullptr;
};

/// The host memory a step's kernels and copies reach: the offloaded checkpoints' host
/// copies and the embedding tables in host memory (adjacent in bertc's plans), and what
/// lies between them.
ArenaRegion hostDeviceShared(const TrainerPlan &plan) {
  const ArenaRegion &copies = plan.hostActivations, &tables = plan.hostParameters;
  if (copies.bytes == 0 || tables.bytes == 0)
    return copies.bytes > 0 ? copies : tables;
  size_t begin = std::min(copies.offset, tables.offset);
  size_t end = std::max(copies.offset + copies.bytes, tables.offset + tables.bytes);
  return {begin, end - begin};
}

/// The bytes the device holds: the arena less its host-resident end.
size_t deviceArenaBytes(const TrainerPlan &plan) {
  return plan.hostResident.bytes > 0 ? plan.hostResident.offset : plan.arenaBytes;
}

/// cudaMalloc, with an allocation failure reported as the arena not fitting (exit code 3).
DeviceBuffer deviceAllocate(size_t bytes, const char *what) {
  void *pointer = nullptr;
  cudaError_t status = cudaMalloc(&pointer, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError(); // reported here: do not leave the error pending
    throw ArenaAllocationError(std::string("cannot allocate ") + what +
                               " on the device: " + bytesText(bytes));
  }
  cuda::checkCuda(status, "cudaMalloc(&pointer, bytes)", __FILE__, __LINE__);
  return DeviceBuffer(static_cast<std::byte *>(pointer));
}

/// The device the run uses (the current one), or a plain error when there is none.
int requireDevice() {
  // Kernels are loaded when first launched, not all at start-up (CUDA's default since
  // 12.2, kept unless the environment says otherwise): the context stays within the
  // plan's process reserve.
  ::setenv("CUDA_MODULE_LOADING", "LAZY", /*overwrite=*/0);
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw std::runtime_error(
        std::string("no usable CUDA device (cudaGetDeviceCount: ") +
        (status == cudaSuccess ? "0 devices" : cudaGetErrorString(status)) +
        "): this trainer was built for the cuda target; rebuild it with bertc --target cpu "
        "to train on the CPU");
  int device = 0;
  BERTC_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

/// Each AdamW parameter's 16-bit working copy, in 16-bit values from the arena's start, or
/// -1 for an fp32 parameter: the working copy of the plan's parameter whose fp32 master lies
/// where the AdamW parameter's values do.
std::vector<int64_t> workingCopyOffsets(const TrainerPlan &plan, const CudaSteps &steps) {
  std::unordered_map<size_t, int64_t> workingCopyByMaster;
  for (size_t p = 0; p < plan.numParams; ++p) {
    const ParamSlot &param = plan.params[p];
    if (param.storage != StorageType::F32 && !param.workingCopyOnly)
      workingCopyByMaster[param.masterOffset] = int64_t(param.offset / sizeof(uint16_t));
  }
  std::vector<int64_t> offsets(steps.numAdamWParameters, -1);
  for (size_t i = 0; i < steps.numAdamWParameters; ++i) {
    auto found =
        workingCopyByMaster.find(size_t(steps.adamwParameters[i].paramOffset) * sizeof(float));
    if (found != workingCopyByMaster.end())
      offsets[i] = found->second;
  }
  return offsets;
}

/// The optimizer's tables in their arena slot (cuda::optimizerTables).
struct OptimizerTablePointers {
  AdamWChunk *chunks;
  double *normPartials; ///< cuda::kSquaredNormPartials of them
  float *squaredNorm;
  int *nonFinite;
};

OptimizerTablePointers tablePointers(std::byte *slot, int64_t chunkCount) {
  cuda::OptimizerTables layout = cuda::optimizerTables(chunkCount);
  return {reinterpret_cast<AdamWChunk *>(slot),
          reinterpret_cast<double *>(slot + layout.partialsOffset),
          reinterpret_cast<float *>(slot + layout.squaredNormOffset),
          reinterpret_cast<int *>(slot + layout.nonFiniteOffset)};
}

class CudaStepRunner final : public StepRunner {
public:
  CudaStepRunner(const TrainerPlan &plan, const CudaSteps &steps)
      : StepRunner(plan), steps_(steps), host_(plan.arenaBytes), deviceIndex_(requireDevice()),
        deviceBytes_(deviceArenaBytes(plan)) {
    std::vector<AdamWChunk> chunks =
        cuda::adamwChunks({steps.adamwParameters, steps.adamwParameters + steps.numAdamWParameters},
                          workingCopyOffsets(plan, steps));
    BERTC_CUDA_CHECK(cudaFree(nullptr)); // creates the context: what is in use before the arena
    contextBytes_ = usedBytes();
    try {
      cuda::requireDeviceMemory(deviceBytes_);
    } catch (const cuda::DeviceMemoryError &error) {
      throw ArenaAllocationError(error.what());
    }
    arenaBuffer_ = deviceAllocate(std::max<size_t>(deviceBytes_, 1), "the arena");
    arena_ = arenaBuffer_.get();
    tables_ = tablePointers(arena_ + steps.optimizerTables.offset, int64_t(chunks.size()));
    cudaStream_t stream = nullptr;
    BERTC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    streamOwner_.reset(stream);
    stream_ = stream;
    copy(tables_.chunks, chunks.data(), chunks.size() * sizeof(AdamWChunk), cudaMemcpyHostToDevice);
    synchronize(); // `chunks` is pageable host memory about to go
    gemms_ = std::make_unique<cuda::LinearGemms>(arena_ + steps.gemmWorkspaceOffset, stream_);
    auto *tickets = reinterpret_cast<unsigned *>(arena_ + steps.gemmWorkspaceOffset +
                                                 cuda::kColumnSumTicketsOffset);
    BERTC_CUDA_CHECK(
        cudaMemsetAsync(tickets, 0, cuda::kColumnSumTickets * sizeof(unsigned), stream_));
    device_ = {stream_, gemms_.get(), tables_.chunks, int64_t(chunks.size()), tickets};
    // Offloaded checkpoints are copied down and up every micro-step, inside its graph;
    // the gathers read the embedding tables in host memory in place (mapped; only then, so
    // that a kernel reading a checkpoint's host copy faults). One registration covers both.
    ArenaRegion pinned = hostDeviceShared(plan);
    hostDeviceShared_.pin(host_.data() + pinned.offset, pinned.bytes,
                          /*mapped=*/plan.hostParameters.bytes > 0);
    device_.hostArena = host_.data();
    if (plan.hostParameters.bytes > 0)
      device_.hostMapped = hostDeviceShared_.onDevice(plan.hostParameters.offset - pinned.offset) -
                           plan.hostParameters.offset;
    // A graph replays a micro-step's launches as one, with no event between them to time
    // an op by: a timed trainer launches each micro-step directly.
    if (plan_.timesOps && graphsOff_.empty())
      graphsOff_ = "each op timed: bertc --time-ops";
    if (graphsOff_.empty())
      graph_ = std::make_unique<cuda::StepGraph>(stream_);
    if (steps_.hostUpdate)
      hostOptimizer_ =
          std::make_unique<cuda::HostOptimizer>(plan_, steps_, host_.data(), arena_, stream_);
    samplePeak();
  }

  std::byte *hostArena() override { return host_.data(); }

  void pushState() override {
    for (const ArenaRegion &region : stateRegions())
      copy(arena_ + region.offset, host_.data() + region.offset, region.bytes,
           cudaMemcpyHostToDevice);
    synchronize();
  }

  void pullState() override {
    for (const ArenaRegion &region : stateRegions())
      copy(host_.data() + region.offset, arena_ + region.offset, region.bytes,
           cudaMemcpyDeviceToHost);
    synchronize();
  }

  void zeroGradients() override {
    BERTC_CUDA_CHECK(
        cudaMemsetAsync(arena_ + plan_.gradients.offset, 0, plan_.gradients.bytes, stream_));
  }

  float microStep(StepContext &ctx) override {
    uploadInputs(ctx);
    bind(ctx);
    // An offloaded optimizer takes the gradients as the last micro-step completes them.
    bool streaming = hostOptimizer_ && hostOptimizer_->streams() && ctx.lastMicroStep;
    if (streaming)
      hostOptimizer_->beginStreaming(ctx);
    device_.gradients = streaming ? hostOptimizer_.get() : nullptr;
    // The first micro-step launches directly: it loads each kernel's module and chooses
    // cuBLASLt's algorithms outside any capture (a warm-up before capturing, as CUDA's
    // graph guidance asks).
    bool warmUp = graph_ && !streaming && !warmedUp_;
    if (graph_ && !streaming && !warmUp)
      graph_->run([&] { steps_.microStep(ctx, device_); });
    else
      steps_.microStep(ctx, device_);
    warmedUp_ = true;
    warmUpLaunched_ |= warmUp;
    directSteps_ += graph_ && streaming;
    device_.gradients = nullptr;
    return downloadLoss();
  }

  std::unique_ptr<OpTimes> makeOpTimes() override {
    return std::make_unique<cuda::EventOpTimes>(stream_);
  }

  float evalStep(StepContext &ctx, float *logits) override {
    uploadInputs(ctx);
    bind(ctx);
    steps_.evalStep(ctx, device_, logits);
    return downloadLoss();
  }

  /// The measured device peak against the arena, in one line gpu-check.sh reads.
  std::string memoryReport() override {
    samplePeak();
    cudaDeviceProp properties{};
    BERTC_CUDA_CHECK(cudaGetDeviceProperties(&properties, deviceIndex_));
    std::string host = hostOptimizer_ ? "\n" + hostOptimizer_->report() : "";
    return "device peak: " + bytesText(peakUsed_) + " in use on " + properties.name +
           " (cudaMemGetInfo, all processes); arena " + bytesText(deviceBytes_) +
           ", in use before it (CUDA context) " + bytesText(contextBytes_) + "\n" + graphReport() +
           host;
  }

protected:
  bool unscaleGradients(float inverseScale) override {
    cuda::unscaleGradients(gradients(), gradientCount(), inverseScale, tables_.nonFinite, stream_);
    return download(tables_.nonFinite) == 0;
  }
  float clipGradients(float maxNorm) override {
    cuda::squaredNorm(gradients(), gradientCount(), tables_.normPartials, tables_.squaredNorm,
                      stream_);
    cuda::clipByGlobalNorm(gradients(), gradientCount(), tables_.squaredNorm, maxNorm, stream_);
    return std::sqrt(download(tables_.squaredNorm));
  }
  void applyUpdate(StepContext &ctx) override {
    bind(ctx);
    steps_.optimizerStep(ctx, device_);
    if (hostOptimizer_)
      hostOptimizer_->update(ctx);
  }

private:
  /// "CUDA graphs: N micro-steps replayed (...)" after the warm-up, with the micro-steps
  /// launched directly because they streamed gradients, or why graphs are off.
  std::string graphReport() const {
    if (!graph_)
      return "CUDA graphs: off (" + graphsOff_ + "), micro-steps launched directly";
    std::string report = graph_->report();
    if (warmUpLaunched_)
      report += " after 1 launched directly to warm up";
    if (directSteps_ > 0)
      report += ", " + std::to_string(directSteps_) +
                " launched directly (gradients streamed to the host optimizer)";
    return report;
  }

  float *gradients() const { return reinterpret_cast<float *>(arena_ + plan_.gradients.offset); }
  int64_t gradientCount() const { return int64_t(plan_.gradients.bytes / sizeof(float)); }

  /// The regions the host sets and saves that the device holds: parameters, their fp32
  /// masters and the moments (the last two stay on the host when offloaded).
  std::vector<ArenaRegion> stateRegions() const {
    if (hostOptimizer_)
      return {plan_.parameters};
    return {plan_.parameters, plan_.masterWeights, plan_.optimizerState};
  }

  void copy(void *to, const void *from, size_t bytes, cudaMemcpyKind kind) {
    if (bytes > 0)
      BERTC_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, stream_));
  }
  void synchronize() { BERTC_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  /// One device value, once the work queued before it is done.
  template <typename T> T download(const T *value) {
    T result{};
    copy(&result, value, sizeof result, cudaMemcpyDeviceToHost);
    synchronize();
    return result;
  }

  /// The input slots a micro-batch of ctx.batch rows padded to ctx.seq tokens fills.
  void uploadInputs(const StepContext &ctx) {
    const InputSlots &slots = plan_.inputs;
    size_t tokens = size_t(ctx.batch * ctx.seq) * sizeof(int32_t);
    for (size_t i = 0; i < slots.numModel; ++i) {
      size_t offset = slots.model[i].offset;
      copy(arena_ + offset, host_.data() + offset, tokens, cudaMemcpyHostToDevice);
    }
    copy(arena_ + slots.labels, host_.data() + slots.labels,
         labelBytes(plan_.train.task, ctx.batch, ctx.seq), cudaMemcpyHostToDevice);
  }

  /// Waits for the step and returns its loss (also the step's error check: a fault in any
  /// of its kernels surfaces here). The peak is sampled after every step because lazily
  /// loaded kernels grow the context the first time they run (the first eval step's too).
  float downloadLoss() {
    float loss = download(reinterpret_cast<const float *>(arena_ + plan_.inputs.loss));
    samplePeak();
    return loss;
  }

  void bind(StepContext &ctx) const {
    ctx.arena = arena_;
    ctx.scratch = reinterpret_cast<float *>(arena_ + plan_.scratch.offset);
    ctx.planCheck = nullptr;
  }

  static size_t usedBytes() {
    cuda::DeviceMemory memory = cuda::deviceMemory();
    return memory.totalBytes - memory.freeBytes;
  }
  void samplePeak() { peakUsed_ = std::max(peakUsed_, usedBytes()); }

  // Destroyed in reverse: the GEMMs before their stream, the stream before the memory.
  const CudaSteps &steps_;
  HostMirror host_;
  PinnedRange hostDeviceShared_; ///< hostDeviceShared(plan_) in host_
  int deviceIndex_;
  size_t deviceBytes_; ///< the device arena: the plan's arena less its host-resident end
  DeviceBuffer arenaBuffer_;
  Stream streamOwner_;
  std::byte *arena_ = nullptr;
  OptimizerTablePointers tables_{};
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<cuda::LinearGemms> gemms_;
  std::unique_ptr<cuda::HostOptimizer> hostOptimizer_; ///< with TrainerPlan::hostResident
  std::string graphsOff_ = cuda::graphsDisabledReason();
  std::unique_ptr<cuda::StepGraph> graph_; ///< unless graphsOff_ says why not
  bool warmedUp_ = false;                  ///< once the first micro-step ran
  bool warmUpLaunched_ = false;            ///< the first micro-step ran without a graph
  size_t directSteps_ = 0;                 ///< micro-steps that streamed, without a graph
  cuda::StepDevice device_{};
  size_t contextBytes_ = 0; ///< in use once the context exists, before the arena
  size_t peakUsed_ = 0;
};

} // namespace

void requireRunnableDevice(const Trainer &trainer) {
  if (!trainer.cuda)
    return; // makeStepRunner says so
  requireDevice();
  cuda::requireDeviceArch(trainer.cuda->newerGpuMath);
}

std::unique_ptr<StepRunner> makeStepRunner(const Trainer &trainer) {
  if (!trainer.cuda)
    throw std::runtime_error("this trainer was built for the cpu target but linked with the "
                             "cuda target's runtime: rebuild it with bertc");
  return std::make_unique<CudaStepRunner>(*trainer.plan, *trainer.cuda);
}

} // namespace bertc

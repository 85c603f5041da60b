//===- DeviceModel.cpp - the speeds a step estimate assumes ---------------===//
//
// GPUs: one representative card per generation, from its datasheet, dense (no sparsity):
//
//   arch   card           fp32 on      16-bit on tensor cores,  TF32 on       memory  SMs x boost
//                         CUDA cores   fp32 accumulation        tensor cores  (GB/s)  clock (GHz)
//                         (TFLOP/s)    (TFLOP/s)                (TFLOP/s)
//   sm_75  T4             8.1          65 (fp16)                -             320     40 x 1.59
//   sm_80  A100 SXM 40GB  19.5         312 (bf16/fp16)          156           1555    108 x 1.41
//   sm_86  RTX 3090       35.6         71                       35.6          936     82 x 1.695
//   sm_89  RTX 4090       82.6         165.2                    82.6          1008    128 x 2.52
//   sm_90  H100 SXM       67           989                      494.7         3350    132 x 1.98
//
// Their host links, each way: PCIe 3.0 x16 (15.75 GB/s) for the T4, 4.0 x16 (31.5 GB/s)
// for the A100, RTX 3090 and RTX 4090, 5.0 x16 (63 GB/s) for the H100.
//
// (NVIDIA's T4, A100 and H100 datasheets; the GA102 and Ada whitepapers for the GeForce
// cards, whose tensor cores run at half rate with fp32 accumulation.) cuBLASLt runs fp32
// GEMMs with CUBLAS_COMPUTE_32F (runtime/cuda/gemm.cu), so they get the fp32 rate, as do
// bertc's own kernels, which compute in fp32 on CUDA cores; with `--tf32` (from sm_80)
// it runs them with CUBLAS_COMPUTE_32F_FAST_TF32, at the TF32 rate.
//
// Nothing reaches a datasheet peak. The estimate assumes these fractions of it, the same
// for every GPU: 0.7 for cuBLASLt's GEMMs at BERT's shapes, 0.5 for bertc's own kernels
// (plain fp32 loops, shuffles and exp beside their multiply-adds), and 0.8 of the memory
// bandwidth for streaming kernels and of the PCIe link's. A launch, with the gap between
// back-to-back kernels on one stream, costs 5 us.
//
// The fused attention's warp matrix products are priced from a measurement instead: an
// H200 ran those of bertc's earlier two-pass kernels (WMMA) at 0.03 of its tensor-core
// peak, 29.67 TFLOP/s (BERT-base, seq 512, batch 32: forward 1.32 ms, backward 3.43 ms a
// layer, against 1.30 and 3.30 at that rate). Their profile (ncu) showed them bound by
// latency, not by a unit (SMs 47% busy, memory 35%): every product loaded its operand
// fragments from shared memory and the scores went through shared memory between products,
// with barriers between tiles. So the other GPUs get that rate scaled by their SMs times
// their clock, not a fraction of their tensor-core peak: 0.11 of the T4's, 0.055 of the
// A100's, 0.22 of the RTX 3090's and 4090's (unmeasured there). The kernels that run now
// (runtime/cuda/attention_mma_*.cu) keep their scores in registers on mma.sync; no GPU has
// timed them yet, so they keep that rate until one does (scripts/gpu-check.sh's attention
// step).

// A trainer process holds device memory beside its arena: the CUDA context with its loaded
// kernel images, 300-500 MB on Turing to Ada GPUs with CUDA 12-13 (lazy module loading),
// and the cuBLASLt handle, stream and graphs, a few MB more; 512 MiB covers them.
//
// Measured on an H200 (sm_90, CUDA 13.0, driver 580; bench/README.md), the trainer held
// 527 MiB before its arena and 8 MiB more beside it (the context grows with the SM count
// and the card's memory), so sm_90 reserves 640 MiB. gpu-check.sh compares each trainer's
// measured peak with its plan.
//
// The CPU figures are measured on the two-core x86-64 development machine, shared with
// other work (so no fractions): OpenBLAS sgemm ran 60-100 GFLOP/s at BERT's shapes, about
// 100 on one core: 100. 16-bit GEMMs first convert their tiles to fp32 on one core
// (runtime/cpu/mixed_gemm.h), about 40% more time: 70. bertc's CPU loops run on one core
// without FMA (x86-64-v2); a dropout mask draw took 12-24 ns, 8-17 GFLOP/s in the units
// the ops count (bert/KernelWork.h): 12. Memory: 10 GB/s; a call: 1 us. With these the
// estimates of bench/README.md's CPU trainer steps come within 12% of the measured
// times (mini: 0.41 s against 0.38; tiny: 0.012 s against 0.011). An optimizer offloaded
// from a GPU runs the CPU trainer's AdamW on the GPU machine's host, priced with these
// same figures: two cores are what a Colab or a small cloud instance gives.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/DeviceModel.h"

using mlir::bert::ComputeUnit;
using mlir::bert::CostTarget;

namespace bertc {

double DeviceModel::flopsPerSecond(ComputeUnit unit) const {
  switch (unit) {
  case ComputeUnit::Fp32Gemm:
    return fp32GemmFlopsPerSecond;
  case ComputeUnit::Tf32Gemm:
    // A module marked for TF32 priced on a machine without it runs its GEMMs in fp32.
    return hasTf32() ? tf32GemmFlopsPerSecond : fp32GemmFlopsPerSecond;
  case ComputeUnit::HalfGemm:
    return halfGemmFlopsPerSecond;
  case ComputeUnit::Fp32Cores:
    return coreFlopsPerSecond;
  case ComputeUnit::HalfOwnMatrix:
    return ownMatrixFlopsPerSecond;
  }
  return coreFlopsPerSecond;
}

const DeviceModel &cpuDeviceModel() {
  static const DeviceModel cpu = [] {
    DeviceModel model{"cpu", CostTarget::Cpu, 100e9, 70e9, 12e9, 10e9, 1e-6, ""};
    // The CPU target never runs warp matrix products; its 16-bit GEMM rate stands in.
    model.ownMatrixFlopsPerSecond = model.halfGemmFlopsPerSecond;
    return model;
  }();
  return cpu;
}

namespace {

constexpr double kGemmFraction = 0.7;
constexpr double kOwnKernelFraction = 0.5;
/// The fused attention's warp matrix products on the H200 (132 SMs at 1.98 GHz), per SM
/// and GHz.
constexpr double kOwnMatrixFlopsPerSmGigahertz = 0.03 * 989e12 / (132 * 1.98);
constexpr int64_t kProcessReserveBytes = int64_t(512) << 20;
constexpr double kBandwidthFraction = 0.8;
constexpr double kSecondsPerLaunch = 5e-6;

/// A GPU from its datasheet peaks, at the attainable fractions above.
constexpr DeviceModel fromDatasheet(const char *arch, double fp32Peak, double tensorPeak,
                                    double tf32Peak, double bandwidthPeak, double pciePeak,
                                    double sms, double boostGigahertz, const char *halfPrecision) {
  return {arch,
          CostTarget::Cuda,
          fp32Peak * kGemmFraction,
          tensorPeak * kGemmFraction,
          fp32Peak * kOwnKernelFraction,
          bandwidthPeak * kBandwidthFraction,
          kSecondsPerLaunch,
          halfPrecision,
          tf32Peak * kGemmFraction,
          pciePeak * kBandwidthFraction,
          kOwnMatrixFlopsPerSmGigahertz * sms * boostGigahertz,
          kProcessReserveBytes};
}

/// sm_90 (the H100 SXM's datasheet) with the reserve an H200 measured (above).
constexpr DeviceModel hopper() {
  DeviceModel model =
      fromDatasheet("sm_90", 67e12, 989e12, 494.7e12, 3350e9, 63e9, 132, 1.98, "bf16");
  model.processReserveBytes = int64_t(640) << 20;
  return model;
}

constexpr DeviceModel kGpuModels[] = {
    fromDatasheet("sm_75", 8.1e12, 65e12, 0, 320e9, 15.75e9, 40, 1.59, "fp16"),         // T4
    fromDatasheet("sm_80", 19.5e12, 312e12, 156e12, 1555e9, 31.5e9, 108, 1.41, "bf16"), // A100
    fromDatasheet("sm_86", 35.6e12, 71e12, 35.6e12, 936e9, 31.5e9, 82, 1.695, "bf16"),  // RTX 3090
    fromDatasheet("sm_89", 82.6e12, 165.2e12, 82.6e12, 1008e9, 31.5e9, 128, 2.52,
                  "bf16"), // RTX 4090
    hopper(),
};

} // namespace

const DeviceModel *gpuDeviceModel(llvm::StringRef arch) {
  for (const DeviceModel &model : kGpuModels)
    if (arch == model.name)
      return &model;
  return nullptr;
}

const DeviceModel &deviceModel(llvm::StringRef arch) {
  const DeviceModel *gpu = gpuDeviceModel(arch);
  return gpu ? *gpu : cpuDeviceModel();
}

llvm::StringRef knownArchs() { return "sm_75, sm_80, sm_86, sm_89, sm_90"; }

} // namespace bertc

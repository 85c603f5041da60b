// bertc_attention_time: how long bertc's CUDA attention takes at one shape per sequence
// length, for bench/attention_vs_sdpa.py to set beside PyTorch's scaled_dot_product_attention.
// Per sequence length, with q, k, v and dctx [batch, seq, hidden] filled from fixed seeds and
// a key mask of ones (no padding), it times the fused kernels (attentionForward/Backward,
// whose products run on tensor cores or CUDA cores as attentionOnTensorCores says, and the
// output says which) and the chunked tensor-core ones (chunkedAttentionForward/Backward)
// with head chunk = heads and heads / 2: the forward, and the forward then the backward, each the
// median of
// --runs runs timed by events on one stream after --warmup untimed runs.
// --check also compares one forward and backward of each tensor-core variant with the fused
// kernels' (ctx, lse, dq, dk, dv, at the kernel tests' tolerances) and exits 1 when they
// differ. The same source runs on the simulated device (bertc_attention_time_sim), where the
// times are the CPU's and only --check's answer means anything.
#include "attention_time_options.h"

#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_chunked_attention.h"
#include "bertc/runtime/cuda_kernels.h"

#if defined(BERTC_CUDA_SIM)
#include "bertc/cuda_sim/faults.h"
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace bertc::cuda {
namespace {

/// One device allocation, freed with its owner.
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes) {
    BERTC_CUDA_CHECK(cudaMalloc(&data, std::max<size_t>(bytes, 1)));
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  template <typename T> T *as() const { return static_cast<T *>(data); }

private:
  void *data = nullptr;
};

/// A device buffer holding `host`.
template <typename T> std::unique_ptr<DeviceBuffer> upload(const std::vector<T> &host) {
  std::unique_ptr<DeviceBuffer> buffer = std::make_unique<DeviceBuffer>(host.size() * sizeof(T));
  BERTC_CUDA_CHECK(
      cudaMemcpy(buffer->as<void>(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return buffer;
}

/// `count` values of T from `buffer`, once `stream`'s work is done.
template <typename T>
std::vector<T> download(const DeviceBuffer &buffer, size_t count, cudaStream_t stream) {
  BERTC_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<T> host(count);
  BERTC_CUDA_CHECK(
      cudaMemcpy(host.data(), buffer.as<T>(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

/// `count` values uniform in [low, high) from `seed`, rounded to T.
template <typename T>
std::vector<T> uniformValues(size_t count, uint32_t seed, float low, float high) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<T> values(count);
  for (T &value : values)
    value = fromFloat<T>(uniform(generator));
  return values;
}

/// A timing event.
class Event {
public:
  Event() { BERTC_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDefault)); }
  ~Event() { cudaEventDestroy(event); }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  cudaEvent_t get() const { return event; }

private:
  cudaEvent_t event = nullptr;
};

/// Median milliseconds of `runs` runs of `work`, each between two events on `stream`, after
/// `warmup` untimed runs (the first calls pick cuBLASLt's algorithms).
double medianMilliseconds(cudaStream_t stream, int64_t warmup, int64_t runs,
                          const std::function<void()> &work) {
  for (int64_t i = 0; i < warmup; ++i)
    work();
  Event start, stop;
  std::vector<double> times;
  for (int64_t i = 0; i < runs; ++i) {
    BERTC_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    work();
    BERTC_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    BERTC_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float milliseconds = 0.0f;
    BERTC_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()));
    times.push_back(milliseconds);
  }
  std::sort(times.begin(), times.end());
  const size_t middle = times.size() / 2;
  return times.size() % 2 ? times[middle] : (times[middle - 1] + times[middle]) / 2;
}

/// Whether kernels differ at one output: the largest |tensor-core - fused|, and how many
/// values lie outside atol + rtol * |fused|.
struct Difference {
  std::string tensor;
  double largest = 0;
  int64_t outside = 0;
};

template <typename T>
Difference compare(const std::string &tensor, const std::vector<T> &actual,
                   const std::vector<T> &expected, double atol, double rtol) {
  Difference difference{tensor};
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = toFloat(actual[i]), e = toFloat(expected[i]);
    const double gap = std::abs(a - e);
    difference.largest = std::max(difference.largest, gap);
    if (!(gap <= atol + rtol * std::abs(e)))
      ++difference.outside;
  }
  return difference;
}

/// The kernel tests' tolerances for the tensor-core kernels against the fused ones
/// (test/unit/cuda/chunked_attention_test.cpp): fp32 math in another order, and for 16-bit
/// types one rounding step of P*Z and dS.
template <typename T> std::pair<double, double> tolerance() {
  if (std::is_same_v<T, bf16>)
    return {1e-2, 1.6e-2};
  if (std::is_same_v<T, fp16>)
    return {2e-3, 2e-3};
  return {1e-5, 1e-5};
}

/// The attention's tensors at one sequence length, and the two kernels' calls on them.
template <typename T> class AttentionProblem {
public:
  AttentionProblem(const Options &options, int64_t seq, LinearGemms &gemms)
      : options(options), seq(seq), gemms(gemms),
        elements(size_t(options.batch * seq * options.hidden)),
        lseCount(size_t(options.batch * options.heads * seq)),
        // q and k in [-0.5, 0.5), so that no probability underflows a 16-bit type.
        q(upload(uniformValues<T>(elements, 1, -0.5f, 0.5f))),
        k(upload(uniformValues<T>(elements, 2, -0.5f, 0.5f))),
        v(upload(uniformValues<T>(elements, 3, -1.0f, 1.0f))),
        dctx(upload(uniformValues<T>(elements, 4, -1.0f, 1.0f))),
        mask(upload(std::vector<int32_t>(size_t(options.batch * seq), 1))),
        ctx(elements * sizeof(T)), dq(elements * sizeof(T)), dk(elements * sizeof(T)),
        dv(elements * sizeof(T)), lse(lseCount * sizeof(float)),
        // The largest head chunk's workspaces serve every kernel.
        forwardWorkspace(attentionForwardWorkspaceBytes(options.heads, options.batch, seq)),
        backwardWorkspace(attentionBackwardWorkspaceBytes(
            options.heads, options.batch, options.heads, seq, options.dropout > 0)) {}

  /// Writes ctx and lse; headChunk 0 is the fused kernel.
  void forward(int64_t headChunk) {
    if (headChunk == 0)
      attentionForward(q->as<T>(), k->as<T>(), v->as<T>(), mask->as<int32_t>(), ctx.as<T>(),
                       lse.as<float>(), options.batch, seq, options.hidden, options.heads,
                       options.dropout, kKey, gemms.stream());
    else
      chunkedAttentionForward(gemms, q->as<T>(), k->as<T>(), v->as<T>(), mask->as<int32_t>(),
                              ctx.as<T>(), lse.as<float>(), forwardWorkspace.as<float>(), headChunk,
                              options.batch, seq, options.hidden, options.heads, options.dropout,
                              kKey);
  }

  /// Writes dq, dk and dv from the last forward's ctx and lse.
  void backward(int64_t headChunk) {
    if (headChunk == 0)
      attentionBackward(dctx->as<T>(), q->as<T>(), k->as<T>(), v->as<T>(), mask->as<int32_t>(),
                        ctx.as<T>(), lse.as<float>(), backwardWorkspace.as<float>(), dq.as<T>(),
                        dk.as<T>(), dv.as<T>(), options.batch, seq, options.hidden, options.heads,
                        options.dropout, kKey, gemms.stream());
    else
      chunkedAttentionBackward(gemms, dctx->as<T>(), q->as<T>(), k->as<T>(), v->as<T>(),
                               mask->as<int32_t>(), ctx.as<T>(), lse.as<float>(),
                               backwardWorkspace.as<float>(), dq.as<T>(), dk.as<T>(), dv.as<T>(),
                               headChunk, options.batch, seq, options.hidden, options.heads,
                               options.dropout, kKey);
  }

  /// ctx, lse, dq, dk and dv of one forward and backward of the kernel, downloaded.
  struct Outputs {
    std::vector<T> ctx;
    std::vector<float> lse;
    std::vector<T> dq, dk, dv;
  };
  Outputs run(int64_t headChunk) {
    forward(headChunk);
    backward(headChunk);
    cudaStream_t stream = gemms.stream();
    return {download<T>(ctx, elements, stream), download<float>(lse, lseCount, stream),
            download<T>(dq, elements, stream), download<T>(dk, elements, stream),
            download<T>(dv, elements, stream)};
  }

private:
  static constexpr DropoutKey kKey{1234, 1, 0, 0};

  const Options &options;
  int64_t seq;
  LinearGemms &gemms;
  size_t elements, lseCount;
  std::unique_ptr<DeviceBuffer> q, k, v, dctx, mask; // [batch, seq, hidden]; mask [batch, seq]
  DeviceBuffer ctx, dq, dk, dv;                      // [batch, seq, hidden]
  DeviceBuffer lse;                                  // [batch, heads, seq] fp32
  DeviceBuffer forwardWorkspace, backwardWorkspace;
};

/// The tensor-core variant against the fused kernel's outputs; appends to `checks`, and
/// returns whether every output agreed.
template <typename T>
bool checkAgainstFused(AttentionProblem<T> &problem,
                       const typename AttentionProblem<T>::Outputs &fused, int64_t seq,
                       int64_t headChunk, nlohmann::json &checks) {
  const auto chunked = problem.run(headChunk);
  const auto [atol, rtol] = tolerance<T>();
  // lse is fp32 from the same inputs on both paths.
  const Difference differences[] = {compare("ctx", chunked.ctx, fused.ctx, atol, rtol),
                                    compare("lse", chunked.lse, fused.lse, 1e-5, 1e-5),
                                    compare("dq", chunked.dq, fused.dq, atol, rtol),
                                    compare("dk", chunked.dk, fused.dk, atol, rtol),
                                    compare("dv", chunked.dv, fused.dv, atol, rtol)};
  bool agreed = true;
  for (const Difference &difference : differences) {
    agreed = agreed && difference.outside == 0;
    checks.push_back({{"seq", seq},
                      {"head_chunk", headChunk},
                      {"tensor", difference.tensor},
                      {"largest_difference", difference.largest},
                      {"outside_tolerance", difference.outside}});
  }
  return agreed;
}

/// Times every kernel at every sequence length (and checks them with --check); returns the
/// exit status.
template <typename T> int measure(const Options &options, const cudaDeviceProp &device) {
  cudaStream_t stream = nullptr;
  BERTC_CUDA_CHECK(cudaStreamCreate(&stream));
  DeviceBuffer gemmWorkspace(kCudaWorkspaceBytes);
  LinearGemms gemms(gemmWorkspace.as<void>(), stream);
  std::vector<int64_t> headChunks{0, options.heads};
  if (options.heads % 2 == 0)
    headChunks.push_back(options.heads / 2);

  nlohmann::json results = nlohmann::json::array(), checks = nlohmann::json::array();
  bool agreed = true;
  for (int64_t seq : options.seqs) {
    AttentionProblem<T> problem(options, seq, gemms);
    for (int64_t headChunk : headChunks) {
      const double forward = medianMilliseconds(stream, options.warmup, options.runs,
                                                [&] { problem.forward(headChunk); });
      const double forwardBackward = medianMilliseconds(stream, options.warmup, options.runs, [&] {
        problem.forward(headChunk);
        problem.backward(headChunk);
      });
      results.push_back({{"seq", seq},
                         {"kernel", headChunk == 0 ? "fused" : "tensor-core"},
                         {"head_chunk", headChunk},
                         {"forward_ms", forward},
                         {"forward_backward_ms", forwardBackward}});
    }
    if (options.check) {
      const auto fused = problem.run(0);
      for (size_t i = 1; i < headChunks.size(); ++i)
        agreed = checkAgainstFused(problem, fused, seq, headChunks[i], checks) && agreed;
    }
  }
  BERTC_CUDA_CHECK(cudaStreamSynchronize(stream));
  BERTC_CUDA_CHECK(cudaStreamDestroy(stream));
#if defined(BERTC_CUDA_SIM)
  // Its checkers' reports (an access past a workspace, ...) fail the run as a fault would.
  if (!sim::faultReports().empty())
    throw std::runtime_error("the simulated device reported " +
                             std::to_string(sim::faultReports().size()) +
                             " fault(s), the first: " + sim::faultReports().front());
#endif

  const std::string gpu = std::string(device.name) + " (sm_" + std::to_string(device.major) +
                          std::to_string(device.minor) + ")";
  const char *fusedProducts =
      attentionOnTensorCores<T>(options.hidden / options.heads) ? "tensor cores" : "CUDA cores";
  if (options.json) {
    nlohmann::json out = {{"device", gpu},
                          {"batch", options.batch},
                          {"hidden", options.hidden},
                          {"heads", options.heads},
                          {"precision", options.precision},
                          {"dropout", options.dropout},
                          {"runs", options.runs},
                          {"warmup", options.warmup},
                          {"fused_products", fusedProducts},
                          {"results", results},
                          {"grouped_gemms",
                           {{"pointer_arrays", gemms.groupedCalls().pointerArrays},
                            {"per_head", gemms.groupedCalls().perGroup}}}};
    if (options.check)
      out["check"] = {{"passed", agreed}, {"differences", checks}};
    std::cout << out.dump(2) << "\n";
    return agreed ? 0 : 1;
  }
  std::printf("bertc attention on %s: batch %lld, hidden %lld, %lld heads, %s, dropout %g; "
              "median of %lld runs after %lld warm-up\n",
              gpu.c_str(), (long long)options.batch, (long long)options.hidden,
              (long long)options.heads, options.precision.c_str(), options.dropout,
              (long long)options.runs, (long long)options.warmup);
  std::printf("| seq  | kernel                  | forward ms | forward+backward ms |\n"
              "|------|-------------------------|-----------:|--------------------:|\n");
  for (const nlohmann::json &row : results) {
    const int64_t headChunk = row["head_chunk"];
    const std::string kernel =
        headChunk == 0 ? "fused" : "tensor-core, " + std::to_string(headChunk) + " heads";
    std::printf("| %-4lld | %-23s | %10.3f | %19.3f |\n", (long long)row["seq"].get<int64_t>(),
                kernel.c_str(), row["forward_ms"].get<double>(),
                row["forward_backward_ms"].get<double>());
  }
  for (const nlohmann::json &check : checks)
    std::printf(
        "check seq %lld, tensor-core %lld heads vs fused: %s largest |difference| %.3g, "
        "%lld outside tolerance\n",
        (long long)check["seq"].get<int64_t>(), (long long)check["head_chunk"].get<int64_t>(),
        check["tensor"].get<std::string>().c_str(), check["largest_difference"].get<double>(),
        (long long)check["outside_tolerance"].get<int64_t>());
  std::printf("fused products: on %s\n", fusedProducts);
  std::printf("tensor-core products: %lld GEMMs over a chunk's heads (pointer arrays), %lld "
              "as a GEMM per head\n",
              (long long)gemms.groupedCalls().pointerArrays,
              (long long)gemms.groupedCalls().perGroup);
  if (options.check)
    std::printf("check: %s\n", agreed ? "the tensor-core kernels agree with the fused ones"
                                      : "FAILED: the kernels disagree beyond the tolerance");
  return agreed ? 0 : 1;
}

int run(int argc, char **argv) {
  const Options options = parseOptions(argc, argv);
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::fprintf(stderr, "bertc_attention_time: no CUDA device (%s)\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "none found");
    return 1;
  }
  int device = 0;
  cudaDeviceProp properties{};
  BERTC_CUDA_CHECK(cudaGetDevice(&device));
  BERTC_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  // cuBLASLt's bf16 GEMMs, which the tensor-core kernels run, need sm_80.
  if (options.precision == "bf16" && properties.major < 8) {
    std::fprintf(stderr,
                 "bertc_attention_time: bf16 needs sm_80 or newer; this GPU is sm_%d%d (use "
                 "--precision fp16)\n",
                 properties.major, properties.minor);
    return 1;
  }
  if (options.precision == "bf16")
    return measure<bf16>(options, properties);
  if (options.precision == "fp16")
    return measure<fp16>(options, properties);
  return measure<float>(options, properties);
}

} // namespace
} // namespace bertc::cuda

int main(int argc, char **argv) {
  try {
    return bertc::cuda::run(argc, argv);
  } catch (const bertc::cuda::UsageError &error) {
    if (*error.what())
      std::fprintf(stderr, "bertc_attention_time: %s\n", error.what());
    std::fputs(bertc::cuda::kUsage, stderr);
    return *error.what() ? 2 : 0; // --help asked for the usage
  } catch (const std::exception &error) {
    std::fprintf(stderr, "bertc_attention_time: error: %s\n", error.what());
    return 1;
  }
}

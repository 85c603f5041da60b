// The kernels mixed precision adds on the CPU: gradient accumulation from any storage type
// into the fp32 gradient slots, conversion between storage types (bert.cast, and the
// 16-bit working copy of an fp32 master weight), and the fp16 loss-scaling check; elements
// split over the threads (parallel.h).
#include "bertc/runtime/cpu_kernels.h"

#include "parallel.h"
#include "storage_types.h"

#include <atomic>
#include <cmath>

namespace bertc::cpu {

template <typename G> void accumulate(const G *g, float *grad, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      grad[i] += toFloat(g[i]);
  });
}

template <typename From, typename To> void convert(const From *from, To *to, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      to[i] = fromFloat<To>(toFloat(from[i]));
  });
}

// One pass: scale every value and note any that is inf or NaN. Checking after scaling also
// catches a finite gradient that the scaling itself overflows, which the step must not use.
bool unscaleGradients(float *grad, int64_t n, float inverseScale) {
  std::atomic<bool> finite{true};
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    bool chunkFinite = true;
    for (int64_t i = begin; i < end; ++i) {
      grad[i] *= inverseScale;
      chunkFinite &= std::isfinite(grad[i]);
    }
    if (!chunkFinite)
      finite.store(false, std::memory_order_relaxed);
  });
  return finite.load(std::memory_order_relaxed);
}

#define INSTANTIATE_ACCUMULATE(G) template void accumulate(const G *, float *, int64_t);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE_ACCUMULATE)
#undef INSTANTIATE_ACCUMULATE

#define INSTANTIATE_CONVERT_TO(To)                                                                 \
  template void convert(const float *, To *, int64_t);                                             \
  template void convert(const ::bertc::bf16 *, To *, int64_t);                                     \
  template void convert(const ::bertc::fp16 *, To *, int64_t);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE_CONVERT_TO)
#undef INSTANTIATE_CONVERT_TO

} // namespace bertc::cpu

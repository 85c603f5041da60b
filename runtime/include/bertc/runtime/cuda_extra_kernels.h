// CUDA launchers generated CUDA trainers need beyond cuda_kernels.h: the loss seed, the
// cross-entropy gradient without its forward, the regression loss, the LayerNorm statistics
// the IR's layernorm_grad recomputes, and the heads' layout changes ([CLS] selection,
// flattening, transposition). Each is its CPU twin's (cpu_kernels.h) on the device.
// Same conventions as cuda_kernels.h (storage type T in, fp32 math, the stream last,
// CudaError on a failed launch).
#pragma once

#include "bertc/runtime/half_types.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace bertc::cuda {

/// *out = value * scale (the backward's seed: 1, or the fp16 loss scale).
void fillScalar(float *out, float value, float scale, cudaStream_t stream);

/// dlogits = *dloss * (softmax(logits) - onehot(labels)) / normalizer, 0 for rows labelled
/// outside [0, classes): crossEntropyForwardBackward's gradient, without its loss.
void crossEntropyBackward(const float *dloss, const float *logits, const int32_t *labels,
                          float *dlogits, int64_t batch, int64_t classes, float normalizer,
                          cudaStream_t stream);

/// *loss = sum over rows of (predictions[r] - targets[r])^2 / normalizer (in double).
void mseLossForward(const float *predictions, const float *targets, float *loss, int64_t rows,
                    float normalizer, cudaStream_t stream);
/// dpredictions = *dloss * 2 (predictions - targets) / normalizer.
void mseLossBackward(const float *dloss, const float *predictions, const float *targets,
                     float *dpredictions, int64_t rows, float normalizer, cudaStream_t stream);

/// Each row's mean and reciprocal standard deviation (biased variance, + eps) over cols,
/// as layerNormForward saves them, for a layerNormBackward without its forward's.
template <typename T>
void layerNormStatistics(const T *x, float *mean, float *rstd, int64_t rows, int64_t cols,
                         float eps, cudaStream_t stream);

/// out[b, :] = x[b, index, :] for x [batch, seq, hidden].
template <typename T>
void selectTokenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t hidden,
                        int64_t index, cudaStream_t stream);
/// dx = 0 except dx[b, index, :] = dout[b, :].
template <typename T>
void selectTokenBackward(const T *dout, T *dx, int64_t batch, int64_t seq, int64_t hidden,
                         int64_t index, cudaStream_t stream);

/// out[b, :] = x[b] token after token, then zeros up to paddedSeq tokens:
/// x [batch, seq, hidden] -> out [batch, paddedSeq * hidden].
template <typename T>
void flattenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t paddedSeq,
                    int64_t hidden, cudaStream_t stream);
/// dx[b, s, :] = dy[b, s * hidden : (s + 1) * hidden] for s < seq.
template <typename T>
void flattenBackward(const T *dy, T *dx, int64_t batch, int64_t seq, int64_t paddedSeq,
                     int64_t hidden, cudaStream_t stream);

/// y[b, j, i] = x[b, i, j] for x [batch, m, n] (y must not alias x).
void transposeLastTwo(const float *x, float *y, int64_t batch, int64_t m, int64_t n,
                      cudaStream_t stream);

} // namespace bertc::cuda

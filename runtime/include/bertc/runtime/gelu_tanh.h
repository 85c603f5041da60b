// GELU's tanh approximation (torch.nn.functional.gelu(x, approximate="tanh"): GPT-2's, Hugging
// Face's gelu_new and gelu_pytorch_tanh) and its derivative in fp32: shared by the CPU kernels
// (cpu::geluTanhForward, geluTanhBackward) and their CUDA twins, so that both evaluate one
// formula in one order, PyTorch's. tanhf is the C library's on the host and on the simulated
// device, the device's own on a GPU.
#pragma once

#include "bertc/runtime/host_device.h"

#include <cmath>

namespace bertc {

/// sqrt(2 / pi), and the coefficient of x^3 in the tanh's argument.
inline constexpr float kGeluTanhScale = 0.7978845608028654f;
inline constexpr float kGeluTanhCubic = 0.044715f;

/// 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
BERTC_HOST_DEVICE inline float geluTanh(float x) {
  const float inner = kGeluTanhScale * (x + kGeluTanhCubic * (x * x * x));
  return 0.5f * x * (1.0f + tanhf(inner));
}

/// d/dx geluTanh(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), with
/// t = tanh(u) as in geluTanh.
BERTC_HOST_DEVICE inline float geluTanhDerivative(float x) {
  const float xSquared = x * x;
  const float inner = kGeluTanhScale * (x + kGeluTanhCubic * (xSquared * x));
  const float t = tanhf(inner);
  const float innerDerivative = kGeluTanhScale * (1.0f + 3.0f * kGeluTanhCubic * xSquared);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * innerDerivative;
}

} // namespace bertc

//===- RopeFrequencies.h - a decoder's rotary inverse frequencies -*- C++ -*-===//
//
// Internal to the frontend library: the head_dim / 2 inverse frequencies bert.rope
// rotates by, rope_theta and rope_scaling applied as transformers' ROPE_INIT_FUNCTIONS
// compute them (in fp32, in their order of operations).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include "llvm/ADT/SmallVector.h"

namespace bertc {

/// The inverse frequencies of `model`'s rotary embedding: 1 / theta^(2i / d) for
/// i < d / 2 (d the head dim), divided by the factor ("linear"), or stretched by wavelength
/// band ("llama3": low frequencies divided by the factor, high ones kept, the band between
/// interpolated).
llvm::SmallVector<float> ropeInverseFrequencies(const ModelSpec &model);

} // namespace bertc

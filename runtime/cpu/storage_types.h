// Internal to the CPU kernels: the storage types every templated kernel is instantiated for.
// A kernel file defines its templates, then instantiates each of them once per type with
// BERTC_FOR_EACH_STORAGE_TYPE(a macro taking the type).
#pragma once

#include "bertc/runtime/half_types.h"

#define BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)                                                   \
  INSTANTIATE(float)                                                                               \
  INSTANTIATE(::bertc::bf16)                                                                       \
  INSTANTIATE(::bertc::fp16)

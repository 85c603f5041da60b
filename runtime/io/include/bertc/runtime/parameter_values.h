// A parameter's fp32 values, wherever the plan keeps them: at its fp32 slot (its value, or
// the master of a 16-bit one), or, for a workingCopyOnly parameter (a LoRA job's frozen
// base), in its working copy alone, 16-bit or quantized (NF4, int8 rows), which storing
// rounds or quantizes into and reading converts or dequantizes back.
#pragma once

#include "bertc/abi/trainer.h"

#include <cstddef>
#include <vector>

namespace bertc {

/// The bytes of `param`'s working copy at ParamSlot::offset: 4 or 2 a value, or its
/// quantized layout's (quantized_weight_layout.h).
size_t workingCopyBytes(const ParamSlot &param);

/// `param`'s values as fp32: a copy of its fp32 slot, or its working copy read back (a
/// quantized one dequantized, as the step's GEMMs see it).
std::vector<float> parameterValues(const ParamSlot &param, const std::byte *arena);

/// Writes `values` (numel fp32) as `param`'s: into its fp32 slot, which a 16-bit working
/// copy follows once the driver writes the working copies; or straight into the working
/// copy of a workingCopyOnly parameter, rounded or quantized as bitsandbytes does.
void storeParameterValues(const ParamSlot &param, const float *values, std::byte *arena);

} // namespace bertc

// Fuzzes the quant_state JSON of a bitsandbytes 4-bit weight: any bytes parsed as the state.
// A state that parses must describe a weight bertc can lay out: a finite mean, a known
// dtype, and an NF4 layout of its values whose parts follow one another in order, aligned.
// Only SafetensorsError may come out.

#include "fuzz_files.h"

#include "bertc/runtime/bnb_4bit_weight.h"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  bertc::Bnb4bitQuantState state;
  try {
    state = bertc::parseBnb4bitQuantState(text, "model.safetensors: tensor W.quant_state");
  } catch (const bertc::SafetensorsError &) {
    return 0;
  }
  if (!std::isfinite(state.nestedOffset) || (!state.nested && state.nestedOffset != 0.0f))
    __builtin_trap();
  if (state.dtype != "float32" && state.dtype != "bfloat16" && state.dtype != "float16")
    __builtin_trap();
  const bertc::Nf4Layout layout = bertc::nf4Layout(state.values(), state.nested);
  if ((layout.nestedMapOffset >= 0) != state.nested)
    __builtin_trap();
  int64_t previous = bertc::nf4PackedBytes(layout.values);
  for (int64_t offset : {layout.absmaxOffset, layout.nestedAbsmaxOffset, layout.absmaxMeanOffset,
                         layout.quantMapOffset, layout.nestedMapOffset, layout.bytes}) {
    if (offset < 0)
      continue;
    if (offset < previous || offset % bertc::kQuantizedPartAlignment != 0)
      __builtin_trap();
    previous = offset;
  }
  return 0;
}

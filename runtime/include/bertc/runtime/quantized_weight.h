// The numbers of bitsandbytes' weight quantization, defined once for the CPU kernels and
// their CUDA twins (the layouts are in abi/quantized_weight_layout.h):
//   - NF4: the 16 values of bitsandbytes' get_4bit_type("nf4") (quantiles of N(0, 1)
//     scaled to [-1, 1]) and the 15 thresholds of its kernels' dQuantizeNF4 as nvcc
//     compiles them: each constant is the exact midpoint of its two neighbours in 16 digits,
//     rounded to fp32. For 4 of them (codes 0|1, 8|9, 12|13, 14|15) that midpoint lies
//     halfway between two floats and the constant is one ulp from the fp32 (a + b) / 2
//     that bitsandbytes' PyTorch backend compares with, so a scaled value equal to that
//     sum takes the upper code on a GPU and the lower one there: bertc takes the GPU's.
//     A value x of a block with absmax a is scaled by the reciprocal, s = x * (1 / a), and
//     takes the code of the interval s falls in: s above a threshold goes up, s equal to
//     one stays below. An all-zero block has 1 / a = inf and s = NaN, which is above no
//     threshold: code 0, as on bitsandbytes' GPUs.
//   - the nested absmaxes' 8-bit codes: bitsandbytes' dQuantize, a binary search over a
//     sorted 256-value map that gives the nearest value, a tie to the even code of the two.
//   - int8 rows: q = round(x * s) with s = (1 / absmax) * 127 (bitsandbytes' PyTorch
//     int8_vectorwise_quant; round half to even), read back as q * (absmax * (1 / 127))
//     rounded once to the storage type (its 8-bit matmuls' weight dequantization).
// bitsandbytes builds its CUDA kernels with --use_fast_math, where 1 / a is an approximation
// within 1 ulp (and int8's 127 / absmax one within 2): a GPU may give a value whose scaled
// magnitude lies within an ulp of a threshold the neighbouring code. bertc, like
// bitsandbytes' PyTorch backend, divides exactly; reading a file uses its codes as they are.
#pragma once

#include "bertc/abi/quantized_weight_layout.h"
#include "bertc/runtime/dynamic_map.h"
#include "bertc/runtime/host_device.h"

#include <array>
#include <cstdint>

namespace bertc {

/// The value of 4-bit NF4 code `code` (0..15), as bitsandbytes' float table holds it.
BERTC_HOST_DEVICE constexpr float nf4Value(int code) {
  switch (code) {
  case 0:
    return -1.0f;
  case 1:
    return -0.6961928009986877f;
  case 2:
    return -0.5250730514526367f;
  case 3:
    return -0.39491748809814453f;
  case 4:
    return -0.28444138169288635f;
  case 5:
    return -0.18477343022823334f;
  case 6:
    return -0.09105003625154495f;
  case 7:
    return 0.0f;
  case 8:
    return 0.07958029955625534f;
  case 9:
    return 0.16093020141124725f;
  case 10:
    return 0.24611230194568634f;
  case 11:
    return 0.33791524171829224f;
  case 12:
    return 0.44070982933044434f;
  case 13:
    return 0.5626170039176941f;
  case 14:
    return 0.7229568362236023f;
  default:
    return 1.0f;
  }
}

/// The threshold between codes k and k + 1 (k = 0..14): a scaled value above it takes a
/// code above k. bitsandbytes' dQuantizeNF4 constants, ascending, as written there (C++ and
/// nvcc round each once to fp32).
BERTC_HOST_DEVICE constexpr float nf4Threshold(int k) {
  switch (k) {
  case 0:
    return -0.8480964004993439f;
  case 1:
    return -0.6106329262256622f;
  case 2:
    return -0.4599952697753906f;
  case 3:
    return -0.33967943489551544f;
  case 4:
    return -0.23460740596055984f;
  case 5:
    return -0.13791173323988914f;
  case 6:
    return -0.045525018125772476f;
  case 7:
    return 0.03979014977812767f;
  case 8:
    return 0.1202552504837513f;
  case 9:
    return 0.2035212516784668f;
  case 10:
    return 0.2920137718319893f;
  case 11:
    return 0.3893125355243683f;
  case 12:
    return 0.5016634166240692f;
  case 13:
    return 0.6427869200706482f;
  default:
    return 0.8614784181118011f;
  }
}

/// The NF4 code of a value already scaled by its block's 1 / absmax: the number of
/// thresholds it lies above (bitsandbytes' decision tree gives the same; NaN gives 0).
BERTC_HOST_DEVICE constexpr uint8_t nf4Code(float scaled) {
  uint8_t code = 0;
  for (int k = 0; k < int(kNf4MapSize) - 1; ++k)
    code += scaled > nf4Threshold(k) ? 1 : 0;
  return code;
}

/// The byte holding the codes of values 2i (high nibble) and 2i + 1 (low nibble).
BERTC_HOST_DEVICE constexpr uint8_t packNf4(uint8_t first, uint8_t second) {
  return uint8_t(first << 4 | second);
}
BERTC_HOST_DEVICE constexpr uint8_t firstNf4Code(uint8_t byte) { return byte >> 4; }
BERTC_HOST_DEVICE constexpr uint8_t secondNf4Code(uint8_t byte) { return byte & 0x0f; }

/// bitsandbytes' NF4 map, the quant_map it saves beside a weight.
inline constexpr std::array<float, kNf4MapSize> kNf4Map = {
    nf4Value(0),  nf4Value(1),  nf4Value(2),  nf4Value(3), nf4Value(4),  nf4Value(5),
    nf4Value(6),  nf4Value(7),  nf4Value(8),  nf4Value(9), nf4Value(10), nf4Value(11),
    nf4Value(12), nf4Value(13), nf4Value(14), nf4Value(15)};

/// The nested absmaxes' map bertc writes: the signed dynamic map (dynamic_map.h), each value
/// its exact midpoint rounded once. bitsandbytes computes its map with torch.linspace, whose
/// bits depend on the CPU (within 2 ulps of these); its files carry the map they used.
inline constexpr std::array<float, kNestedMapSize> kDefaultNestedMap =
    dynamicMap(DynamicMapKind::Signed);

/// The code of x in a sorted 256-value map, as bitsandbytes' dQuantize finds it:
/// 1. a binary search of 7 halving steps from code 127 moves up where x is above the
///    probed value, else down, remembering the last codes probed below and above x; it
///    ends on an even code p;
/// 2. x above map[p]: the code above p where x is above the fp32 midpoint of the two, else
///    p; x at most map[p]: the code below p where x is under their midpoint, else p.
/// So the nearest value wins and a tie the even code; NaN goes down every step, to code 0.
BERTC_HOST_DEVICE inline uint8_t blockwiseCode(const float *map, float x) {
  int pivot = 127, below = 0, above = 255;
  for (int step = 64; step > 0; step /= 2) {
    if (x > map[pivot]) {
      below = pivot;
      pivot += step;
    } else {
      above = pivot;
      pivot -= step;
    }
  }
  const float value = map[pivot];
  if (x > value)
    return uint8_t(x > (map[above] + value) * 0.5f ? above : pivot);
  return uint8_t(x < (map[below] + value) * 0.5f ? below : pivot);
}

/// The reciprocal absmax an absmax quantizes its block with: x * (1 / absmax).
BERTC_HOST_DEVICE inline float blockScale(float absmax) { return 1.0f / absmax; }

/// The factor int8 rows quantize a row of absmax `absmax` with: (1 / absmax) * 127.
BERTC_HOST_DEVICE inline float int8QuantizeScale(float absmax) { return (1.0f / absmax) * 127.0f; }

/// The factor an int8 row of absmax `absmax` reads back with: absmax * (1 / 127).
BERTC_HOST_DEVICE inline float int8DequantizeScale(float absmax) {
  return absmax * (1.0f / 127.0f);
}

} // namespace bertc

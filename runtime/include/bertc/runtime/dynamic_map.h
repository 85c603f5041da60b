// bitsandbytes' dynamic quantization map ("dynamic tree" quantization, Dettmers 2015;
// bitsandbytes.functional.create_dynamic_map with its defaults, 7 exponent bits in 8): the
// 256 values an 8-bit code of the 8-bit AdamW state stands for (abi/adamw_8bit_state.h),
// and the encoding of a value by its nearest code. Defined once for both kernels: the CPU
// keeps the two maps as constexpr tables, a CUDA block builds them in shared memory from
// the same function.
//
// The map, as create_dynamic_map builds it: for each decade i = 0..6, [0.1, 1] is cut into
// n_i equal parts (n_i = 2^i signed, 2^(i+1) unsigned) and each part's midpoint times
// 10^(i-6) is a value; the signed map also has each value's negation; both have 0 and 1.
// Sorted, that is 256 values:
//   signed    -0.99296875 ... -5.5e-7, 0 (code 127), 5.5e-7 ... 0.99296875, 1 (code 255)
//   unsigned  0 (code 0), 3.25e-7, 7.75e-7 ... 0.996484375, 1 (code 255)
// Part j of decade i has the midpoint 10^(i-6) (0.1 + 0.9 (j + 0.5) / n_i), the ratio of
// integers (2 n_i + 18 j + 9) / (20 n_i 10^(6-i)). Both are floats exactly (the numerator
// is below 2^12, the denominator 2^k 5^(7-i) with 5^7 < 2^24), so one fp32 division gives
// the exact midpoint rounded once to fp32, the same bits on the host and the device. (bitsandbytes
// computes the entries in fp32 with torch.linspace, whose rounding depends on the CPU torch runs
// on: torch 1.13 on x86-64 gives the same values to within 2 fp32 ulps, in the same order, so a
// code means the same value in both.)
#pragma once

#include <array>
#include <cstdint>

#include "bertc/runtime/host_device.h"

namespace bertc {

/// Which of bitsandbytes' two maps: Signed for Adam's first moment, Unsigned (twice the
/// values per decade, no negative ones) for its second.
enum class DynamicMapKind { Signed, Unsigned };

constexpr int kDynamicMapSize = 256;
/// The signed map's code of 0 (the unsigned map's is 0).
constexpr int kSignedZeroCode = 127;

/// The value of `code` (0..255) in the map of kind `kind`, sorted ascending:
/// 1. code 255 is 1 and the zero code 0;
/// 2. a signed code below 127 is the negation of its mirror 254 - code;
/// 3. the codes above the zero code and below 255 are the positive values in ascending
///    order, rank r = code - zero code - 1. Decade i holds n_i = 2^(i+u) of them (u = 0
///    signed, 1 unsigned) from rank 2^(i+u) - 2^u on, so i = floor(log2(r + 2^u)) - u and
///    the part is j = r + 2^u - n_i.
BERTC_HOST_DEVICE constexpr float dynamicMapValue(DynamicMapKind kind, int code) {
  const int u = kind == DynamicMapKind::Signed ? 0 : 1;
  const int zeroCode = kind == DynamicMapKind::Signed ? kSignedZeroCode : 0;
  if (code == kDynamicMapSize - 1)
    return 1.0f;
  if (code == zeroCode)
    return 0.0f;
  const bool negative = code < zeroCode;
  const int rank = (negative ? 2 * zeroCode - code : code) - zeroCode - 1;
  int decade = 0;
  while ((rank + (1 << u)) >> (decade + u + 1) != 0)
    ++decade;
  const int64_t parts = int64_t(1) << (decade + u);
  const int64_t part = rank + (1 << u) - parts;
  int64_t scale = 1; // 10^(6 - decade)
  for (int i = decade; i < 6; ++i)
    scale *= 10;
  const float value = float(2 * parts + 18 * part + 9) / float(20 * parts * scale);
  return negative ? -value : value;
}

/// The whole map of kind `kind`, for the host.
constexpr std::array<float, kDynamicMapSize> dynamicMap(DynamicMapKind kind) {
  std::array<float, kDynamicMapSize> map{};
  for (int code = 0; code < kDynamicMapSize; ++code)
    map[code] = dynamicMapValue(kind, code);
  return map;
}

/// The code of the value nearest to x in a sorted 256-value map, by binary search as
/// bitsandbytes encodes: the largest code whose value is <= x (0 when x is below them all),
/// then the next one up when x lies above the fp32 midpoint of the two (a tie keeps the
/// lower code).
BERTC_HOST_DEVICE inline uint8_t nearestCode(const float *map, float x) {
  int code = 0;
  for (int step = kDynamicMapSize / 2; step > 0; step /= 2)
    if (map[code + step] <= x)
      code += step;
  if (code < kDynamicMapSize - 1 && x > (map[code] + map[code + 1]) * 0.5f)
    ++code;
  return uint8_t(code);
}

} // namespace bertc

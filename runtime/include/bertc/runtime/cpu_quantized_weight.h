// CPU kernels of quantized frozen weights (QLoRA's NF4 base, LLM.int8()'s int8 rows):
// quantizing fp32 weights as bitsandbytes does, bit for bit (quantized_weight.h says how),
// and dequantizing them to fp32, bf16 or fp16. The CUDA twins of the dequantizers are in
// cuda_quantized_weight.h. Plain pointers and sizes; nothing here allocates.
#pragma once

#include "bertc/abi/quantized_weight_layout.h"
#include "bertc/runtime/half_types.h"

#include <cstdint>

namespace bertc::cpu {

/// bitsandbytes' quantize_4bit(x, blocksize=64, quant_type="nf4") of n values:
/// absmax[b] = max |x| over block b (ceil(n / 64) of them) and packed[nf4PackedBytes(n)]
/// their NF4 codes, two a byte, the first in the high nibble (an odd n's last low nibble is
/// the code of a 0, as bitsandbytes pads).
void quantizeNf4(const float *x, int64_t n, uint8_t *packed, float *absmax);

/// The mean of `blocks` absmaxes that double quantization subtracts (bitsandbytes'
/// absmax.mean()): summed in double and rounded once. torch sums in fp32 in its device's
/// order, which can differ from this in the last bit.
float nf4AbsmaxMean(const float *absmax, int64_t blocks);

/// Double quantization (compress_statistics=True): each absmax less `mean` quantized in
/// blocks of 256 by bitsandbytes' quantize_blockwise with the sorted 256-value `nestedMap`:
/// nestedAbsmax[j] = max |absmax - mean| over nested block j, absmaxCodes[b] the code of
/// (absmax[b] - mean) * (1 / nestedAbsmax[b / 256]) (blockwiseCode).
void quantizeNf4Absmax(const float *absmax, int64_t blocks, float mean, const float *nestedMap,
                       uint8_t *absmaxCodes, float *nestedAbsmax);

/// The whole NF4 tensor of `layout` written at `base`: quantizeNf4, then for a nested
/// layout nf4AbsmaxMean and quantizeNf4Absmax with kDefaultNestedMap, and the maps.
/// `absmaxScratch` holds nf4Blocks(n) floats for a nested layout (null for a plain one).
void quantizeNf4Weight(const float *x, const Nf4Layout &layout, void *base, float *absmaxScratch);

/// out[n] = quantMap[code] * absmax of each value's block, rounded once to T; with double
/// quantization a block's absmax is first nestedMap[code] * nestedAbsmax + mean, rounded
/// after the product and after the sum (bitsandbytes' dequantize_4bit).
template <typename T> void dequantizeNf4(const Nf4Weight &weight, T *out);

/// LLM.int8() row-wise quantization of x[rows, cols] (bitsandbytes' int8_vectorwise_quant
/// of its PyTorch backend): absmax[r] = max |x| over row r, q = round(x * (1 / absmax) *
/// 127), half to even; a row of zeros gives 0s (as bitsandbytes' GPUs do).
void quantizeInt8Rows(const float *x, int64_t rows, int64_t cols, int8_t *q, float *absmax);

/// out[rows, cols] = q * (absmax[r] * (1 / 127)), rounded once to T.
template <typename T>
void dequantizeInt8Rows(const int8_t *q, const float *absmax, T *out, int64_t rows, int64_t cols);

} // namespace bertc::cpu

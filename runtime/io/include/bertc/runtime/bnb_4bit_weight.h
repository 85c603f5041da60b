// Reading the 4-bit weights of a bitsandbytes checkpoint (a model saved with
// load_in_4bit / Linear4bit, NF4 in blocks of 64) into bertc's NF4 layout
// (abi/quantized_weight_layout.h). bitsandbytes saves a weight W as the tensors
//   W                                  U8 [ceil(n / 2), 1]  the packed codes
//   W.absmax                           U8 [blocks] with double quantization, else F32 [blocks]
//   W.quant_map                        F32 [16]
//   W.nested_absmax, W.nested_quant_map  F32 [ceil(blocks / 256)], F32 [256] (double quant)
//   W.quant_state.bitsandbytes__nf4    U8: the JSON of QuantState.as_dict(packed=True)'s
//                                      non-tensor items, e.g. {"quant_type": "nf4",
//                                      "blocksize": 64, "dtype": "bfloat16", "shape": [4096,
//                                      4096], "nested_blocksize": 256, "nested_dtype":
//                                      "float32", "nested_offset": 0.0372}
// Every error names the file, the tensor and, for the JSON, the key.
#pragma once

#include "bertc/abi/quantized_weight_layout.h"
#include "bertc/runtime/safetensors.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bertc {

/// The non-tensor part of a bitsandbytes 4-bit weight's state.
struct Bnb4bitQuantState {
  std::vector<int64_t> shape; ///< the weight's shape before quantization
  std::string dtype;          ///< its dtype then: "float32", "bfloat16" or "float16"
  bool nested = false;        ///< double quantization (compress_statistics)
  float nestedOffset = 0.0f;  ///< the mean taken from the absmaxes (nested only)

  /// The number of values: the product of `shape`.
  int64_t values() const;
};

/// Parses the JSON `text` of a quant_state tensor; `context` ("FILE: tensor NAME") begins
/// each error. Accepts bitsandbytes' keys only: quant_type "nf4" (fp4 and others refused),
/// blocksize 64, dtype, shape (non-negative integers, at most 2^48 values), and with double
/// quantization all of nested_blocksize 256, nested_dtype "float32" and a finite
/// nested_offset. Throws SafetensorsError naming the key.
Bnb4bitQuantState parseBnb4bitQuantState(std::string_view text, const std::string &context);

/// A bitsandbytes 4-bit weight found in a file: its state and the layout bertc keeps it in.
struct Bnb4bitWeight {
  Bnb4bitQuantState state;
  Nf4Layout layout;
};

/// The tensors of bitsandbytes' 4-bit weight `name` in the file `reader` reads: `name` (the
/// packed codes) and each `name.<part>` of its state; none when no quant_state stands
/// beside `name` (it is not a 4-bit weight).
template <class Reader>
std::vector<std::string> bnb4bitTensorNames(const Reader &reader, const std::string &name);

/// The 4-bit weight `name` of the file `reader` reads (a SafetensorsReader, or a
/// ShardedSafetensorsReader, whose shards may split a weight's tensors): its quant_state
/// parsed and every tensor it needs checked against it (present, dtype, shape; the packed
/// bytes against the shape's values) without reading them. Throws SafetensorsError.
template <class Reader> Bnb4bitWeight findBnb4bitWeight(Reader &reader, const std::string &name);

/// Reads the tensors of `weight` (from findBnb4bitWeight on the same reader) into its layout
/// at `base`, aligned to kQuantizedPartAlignment, the file's maps and mean included.
template <class Reader>
void readBnb4bitWeight(Reader &reader, const std::string &name, const Bnb4bitWeight &weight,
                       void *base);

} // namespace bertc

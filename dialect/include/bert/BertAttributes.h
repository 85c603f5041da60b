//===- BertAttributes.h - value types of the bert attributes ----*- C++ -*-===//
//
// The C++ values the typed attributes of BertAttributes.td hold, and the enumerations of
// BertEnums.td.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/abi/trainer.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/Hashing.h"

#include <cstdint>
#include <type_traits>

namespace mlir::bert {

/// A byte range of the arena: [offset, offset + bytes).
struct ByteRange {
  int64_t offset = 0;
  int64_t bytes = 0;

  int64_t end() const { return offset + bytes; }
  bool operator==(const ByteRange &other) const {
    return offset == other.offset && bytes == other.bytes;
  }
};
inline llvm::hash_code hash_value(ByteRange range) {
  return llvm::hash_combine(range.offset, range.bytes);
}
/// Parses `[offset, bytes]`.
FailureOr<ByteRange> parseByteRange(AsmParser &parser);

/// How a setting of train_settings.def is held in the IR: as its trainer type, except that
/// numbers the trainer keeps as float stay double, as the job gave them.
template <typename T>
using TrainValueType = std::conditional_t<std::is_same_v<T, float>, double, T>;

using bertc::LrSchedule;
using bertc::TaskKind;

/// The values of `#bert.train`: one field per BERTC_SETTING of train_settings.def.
struct TrainValues {
#define BERTC_SETTING(type, field, key) TrainValueType<type> field{};
#define BERTC_PLANNED_SETTING(type, field, key)
#include "bertc/abi/train_settings.def"
#undef BERTC_SETTING
  bool operator==(const TrainValues &other) const;
};
llvm::hash_code hash_value(const TrainValues &values);

/// The spellings of the settings' enumerations in the IR and in the job ("linear",
/// "token-classification"), and back.
llvm::StringRef spelling(bertc::LrSchedule schedule);
llvm::StringRef spelling(bertc::TaskKind task);
std::optional<bertc::LrSchedule> parseLrSchedule(llvm::StringRef text);
std::optional<bertc::TaskKind> parseTaskKind(llvm::StringRef text);

} // namespace mlir::bert

#include "bert/BertEnums.h.inc"

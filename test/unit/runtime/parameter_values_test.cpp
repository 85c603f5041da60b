// A parameter's values stored into and read back from the slot the plan keeps them in: its
// fp32 slot (a master, or the value itself), or for a workingCopyOnly parameter its working
// copy alone, rounded to 16 bits or quantized. Each expectation is derived here: a bf16
// value is the fp32 one with its low 16 bits rounded to nearest even; an int8 row reads back
// as round(x * 127 / absmax) * absmax / 127; an NF4 block of values equal to the table's,
// scaled by their absmax, reads back exactly.
#include "bertc/runtime/parameter_values.h"

#include "bertc/abi/quantized_weight_layout.h"
#include "bertc/runtime/quantized_weight.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace bertc {
namespace {

/// A [rows, cols] parameter stored `storage` at offset 0 of the arena, its master (where
/// it keeps one) right after the working copy's bytes.
ParamSlot matrix(int64_t rows, int64_t cols, StorageType storage, bool workingCopyOnly) {
  ParamSlot param{};
  param.name = "w";
  param.rank = 2;
  param.shape[0] = rows;
  param.shape[1] = cols;
  param.numel = rows * cols;
  param.offset = 0;
  param.storage = storage;
  param.workingCopyOnly = workingCopyOnly;
  param.masterOffset = workingCopyOnly ? 0 : 1 << 16;
  return param;
}

TEST(ParameterValues, WorkingCopyBytesFollowTheStorage) {
  EXPECT_EQ(workingCopyBytes(matrix(3, 5, StorageType::F32, false)), 60u);
  EXPECT_EQ(workingCopyBytes(matrix(3, 5, StorageType::BF16, true)), 30u);
  // 64 x 64 NF4: 2048 bytes of codes, 64 fp32 absmaxes, the 16-value map.
  EXPECT_EQ(workingCopyBytes(matrix(64, 64, StorageType::Nf4, true)), 2048u + 256u + 64u);
  // 4 x 64 int8 rows: 256 values, 4 fp32 absmaxes.
  EXPECT_EQ(workingCopyBytes(matrix(4, 64, StorageType::Int8Rows, true)), 256u + 16u);
}

TEST(ParameterValues, AParameterWithAMasterKeepsItsFp32Values) {
  std::vector<std::byte> arena(1 << 17);
  ParamSlot param = matrix(2, 3, StorageType::BF16, false);
  const std::vector<float> values = {0.1f, -2.5f, 3.14159f, 1e-3f, 7.0f, -0.333f};
  storeParameterValues(param, values.data(), arena.data());
  EXPECT_EQ(parameterValues(param, arena.data()), values);
  float master[6];
  std::memcpy(master, arena.data() + param.masterOffset, sizeof master);
  EXPECT_EQ(std::vector<float>(master, master + 6), values);
}

TEST(ParameterValues, A16BitWorkingCopyAloneRoundsToNearestEven) {
  std::vector<std::byte> arena(64);
  ParamSlot param = matrix(1, 3, StorageType::BF16, true);
  // 1 + 2^-8 lies halfway between bf16's 1 and 1 + 2^-7: even (1) wins; 1 + 3 * 2^-8
  // halfway between 1 + 2^-7 and 1 + 2^-6: even (1 + 2^-6) wins; 0.1 rounds to 0x3DCD.
  const std::vector<float> values = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 0.1f};
  storeParameterValues(param, values.data(), arena.data());
  float tenth;
  uint32_t bits = 0x3DCD0000u;
  std::memcpy(&tenth, &bits, sizeof tenth);
  EXPECT_EQ(parameterValues(param, arena.data()),
            (std::vector<float>{1.0f, 1.0f + 0x1p-6f, tenth}));
}

TEST(ParameterValues, Int8RowsReadBackAsTheirCodesTimesTheRowScale) {
  ParamSlot param = matrix(2, 4, StorageType::Int8Rows, true);
  std::vector<std::byte> arena(workingCopyBytes(param));
  const std::vector<float> values = {1.0f, -0.5f, 0.25f, 0.0f, 10.0f, 3.0f, -10.0f, 0.04f};
  storeParameterValues(param, values.data(), arena.data());
  std::vector<float> back = parameterValues(param, arena.data());
  const float absmax[] = {1.0f, 10.0f};
  for (int64_t i = 0; i < 8; ++i) {
    float scale = absmax[i / 4];
    float code = std::nearbyint(values[i] * ((1.0f / scale) * 127.0f));
    EXPECT_EQ(back[i], code * (scale * (1.0f / 127.0f))) << "value " << i;
  }
}

TEST(ParameterValues, Nf4ValuesOnTheTableReadBackExactly) {
  // One block of 64: the 16 table values times 0.5 (the absmax, as the table's largest
  // magnitude is 1), four times over; quantized and read back, each is itself.
  ParamSlot param = matrix(1, 64, StorageType::Nf4, true);
  std::vector<std::byte> arena(workingCopyBytes(param));
  std::vector<float> values(64);
  for (int i = 0; i < 64; ++i)
    values[i] = 0.5f * nf4Value(i % 16);
  storeParameterValues(param, values.data(), arena.data());
  EXPECT_EQ(parameterValues(param, arena.data()), values);
}

} // namespace
} // namespace bertc

// A parameter's values in and out of the slot the plan keeps them in (parameter_values.h).
#include "bertc/runtime/parameter_values.h"

#include "bertc/abi/quantized_weight_layout.h"
#include "bertc/runtime/cpu_kernels.h"

#include <cstring>

namespace bertc {

namespace {

Nf4Layout nf4LayoutOf(const ParamSlot &param) {
  return nf4Layout(param.numel, param.storage == StorageType::Nf4DoubleQuant);
}

Int8RowsLayout int8LayoutOf(const ParamSlot &param) {
  return int8RowsLayout(param.shape[0], param.numel / param.shape[0]);
}

} // namespace

size_t workingCopyBytes(const ParamSlot &param) {
  switch (param.storage) {
  case StorageType::F32:
    return size_t(param.numel) * 4;
  case StorageType::BF16:
  case StorageType::F16:
    return size_t(param.numel) * 2;
  case StorageType::Nf4:
  case StorageType::Nf4DoubleQuant:
    return size_t(nf4LayoutOf(param).bytes);
  case StorageType::Int8Rows:
    return size_t(int8LayoutOf(param).bytes);
  }
  return 0;
}

std::vector<float> parameterValues(const ParamSlot &param, const std::byte *arena) {
  std::vector<float> values(size_t(param.numel));
  if (hasFp32Values(param)) {
    std::memcpy(values.data(), arena + fp32ValueOffset(param), values.size() * sizeof(float));
    return values;
  }
  const std::byte *copy = arena + param.offset;
  switch (param.storage) {
  case StorageType::BF16:
    cpu::convert(reinterpret_cast<const bf16 *>(copy), values.data(), param.numel);
    break;
  case StorageType::F16:
    cpu::convert(reinterpret_cast<const fp16 *>(copy), values.data(), param.numel);
    break;
  case StorageType::Nf4:
  case StorageType::Nf4DoubleQuant:
    cpu::dequantizeNf4(nf4WeightAt(copy, nf4LayoutOf(param)), values.data());
    break;
  case StorageType::Int8Rows: {
    Int8RowsLayout layout = int8LayoutOf(param);
    cpu::dequantizeInt8Rows(reinterpret_cast<const int8_t *>(copy),
                            reinterpret_cast<const float *>(copy + layout.absmaxOffset),
                            values.data(), layout.rows, layout.cols);
    break;
  }
  case StorageType::F32:
    break;
  }
  return values;
}

void storeParameterValues(const ParamSlot &param, const float *values, std::byte *arena) {
  if (hasFp32Values(param)) {
    std::memcpy(arena + fp32ValueOffset(param), values, size_t(param.numel) * sizeof(float));
    return;
  }
  std::byte *copy = arena + param.offset;
  switch (param.storage) {
  case StorageType::BF16:
    cpu::convert(values, reinterpret_cast<bf16 *>(copy), param.numel);
    break;
  case StorageType::F16:
    cpu::convert(values, reinterpret_cast<fp16 *>(copy), param.numel);
    break;
  case StorageType::Nf4:
  case StorageType::Nf4DoubleQuant: {
    Nf4Layout layout = nf4LayoutOf(param);
    std::vector<float> absmaxScratch(layout.nested ? size_t(nf4Blocks(param.numel)) : 0);
    cpu::quantizeNf4Weight(values, layout, copy,
                           absmaxScratch.empty() ? nullptr : absmaxScratch.data());
    break;
  }
  case StorageType::Int8Rows: {
    Int8RowsLayout layout = int8LayoutOf(param);
    cpu::quantizeInt8Rows(values, layout.rows, layout.cols, reinterpret_cast<int8_t *>(copy),
                          reinterpret_cast<float *>(copy + layout.absmaxOffset));
    break;
  }
  case StorageType::F32:
    break;
  }
}

} // namespace bertc

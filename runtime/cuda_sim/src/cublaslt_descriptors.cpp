// The simulated cuBLASLt's handles and descriptors: creation, destruction and attributes.
// As in libcublasLt 13.1 (checked against it: descriptors need no GPU), setting an
// attribute checks only the value's size; values are checked when the descriptors are used
// (cublaslt_matmul.cpp), so a layout with ld < rows is created without complaint.
#include "cublaslt_internal.h"

#include <cstring>
#include <new>

namespace bertc::sim::cublaslt {
namespace {

/// Where an attribute's value lives in a descriptor; field is null for an unknown attribute.
struct AttributeSlot {
  void *field;
  size_t bytes;
};

template <typename T> AttributeSlot slotOf(T &field) { return {&field, sizeof field}; }

AttributeSlot layoutSlot(MatrixLayout &layout, cublasLtMatrixLayoutAttribute_t attribute) {
  switch (attribute) {
  case CUBLASLT_MATRIX_LAYOUT_TYPE:
    return slotOf(layout.type);
  case CUBLASLT_MATRIX_LAYOUT_ORDER:
    return slotOf(layout.order);
  case CUBLASLT_MATRIX_LAYOUT_ROWS:
    return slotOf(layout.rows);
  case CUBLASLT_MATRIX_LAYOUT_COLS:
    return slotOf(layout.cols);
  case CUBLASLT_MATRIX_LAYOUT_LD:
    return slotOf(layout.ld);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
    return slotOf(layout.batchCount);
  case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
    return slotOf(layout.batchStride);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE:
    return slotOf(layout.batchMode);
  }
  return {nullptr, 0};
}

AttributeSlot descSlot(MatmulDesc &desc, cublasLtMatmulDescAttributes_t attribute) {
  switch (attribute) {
  case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
    return slotOf(desc.computeType);
  case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
    return slotOf(desc.scaleType);
  case CUBLASLT_MATMUL_DESC_POINTER_MODE:
    return slotOf(desc.pointerMode);
  case CUBLASLT_MATMUL_DESC_TRANSA:
    return slotOf(desc.transA);
  case CUBLASLT_MATMUL_DESC_TRANSB:
    return slotOf(desc.transB);
  case CUBLASLT_MATMUL_DESC_EPILOGUE:
    return slotOf(desc.epilogue);
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    return slotOf(desc.biasPointer);
  case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
    return slotOf(desc.biasBatchStride);
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
    return slotOf(desc.auxPointer);
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
    return slotOf(desc.auxLd);
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE:
    return slotOf(desc.auxBatchStride);
  case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
    return slotOf(desc.biasDataType);
  }
  return {nullptr, 0};
}

AttributeSlot preferenceSlot(MatmulPreference &preference,
                             cublasLtMatmulPreferenceAttributes_t attribute) {
  switch (attribute) {
  case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
    return slotOf(preference.maxWorkspaceBytes);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    return slotOf(preference.minAlignment[0]);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    return slotOf(preference.minAlignment[1]);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    return slotOf(preference.minAlignment[2]);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
    return slotOf(preference.minAlignment[3]);
  }
  return {nullptr, 0};
}

cublasStatus_t setAttribute(AttributeSlot slot, const void *buf, size_t sizeInBytes) {
  if (!slot.field || !buf || sizeInBytes != slot.bytes)
    return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(slot.field, buf, sizeInBytes);
  return CUBLAS_STATUS_SUCCESS;
}

/// sizeInBytes 0 asks for the attribute's size alone.
cublasStatus_t getAttribute(AttributeSlot slot, void *buf, size_t sizeInBytes,
                            size_t *sizeWritten) {
  if (!slot.field)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (sizeInBytes == 0) {
    if (!sizeWritten)
      return CUBLAS_STATUS_INVALID_VALUE;
    *sizeWritten = slot.bytes;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (!buf || sizeInBytes != slot.bytes)
    return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, slot.field, sizeInBytes);
  if (sizeWritten)
    *sizeWritten = slot.bytes;
  return CUBLAS_STATUS_SUCCESS;
}

/// Stores a new object, seen through the public handle type, in *handle.
template <typename Handle, typename Object>
cublasStatus_t createObject(Handle *handle, const Object &initial) {
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  Object *object = new (std::nothrow) Object(initial);
  if (!object)
    return CUBLAS_STATUS_ALLOC_FAILED;
  *handle = reinterpret_cast<Handle>(object);
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace
} // namespace bertc::sim::cublaslt

using namespace bertc::sim::cublaslt;

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle) {
  keepBlasToTheCallingThread();
  return createObject(lightHandle, cublasLtContext{});
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
  if (!lightHandle)
    return CUBLAS_STATUS_INVALID_VALUE;
  delete lightHandle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType_t type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  MatrixLayout layout;
  layout.type = uint32_t(type);
  layout.rows = rows;
  layout.cols = cols;
  layout.ld = ld;
  return createObject(matLayout, layout);
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  delete unwrap(matLayout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t sizeInBytes) {
  if (!matLayout)
    return CUBLAS_STATUS_INVALID_VALUE;
  return setAttribute(layoutSlot(*unwrap(matLayout), attr), buf, sizeInBytes);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr, void *buf,
                                                size_t sizeInBytes, size_t *sizeWritten) {
  if (!matLayout)
    return CUBLAS_STATUS_INVALID_VALUE;
  return getAttribute(layoutSlot(*unwrap(matLayout), attr), buf, sizeInBytes, sizeWritten);
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                        cublasComputeType_t computeType, cudaDataType_t scaleType) {
  MatmulDesc desc;
  desc.computeType = int32_t(computeType);
  desc.scaleType = int32_t(scaleType);
  return createObject(matmulDesc, desc);
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  delete unwrap(matmulDesc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, const void *buf,
                                              size_t sizeInBytes) {
  if (!matmulDesc)
    return CUBLAS_STATUS_INVALID_VALUE;
  return setAttribute(descSlot(*unwrap(matmulDesc), attr), buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, void *buf,
                                              size_t sizeInBytes, size_t *sizeWritten) {
  if (!matmulDesc)
    return CUBLAS_STATUS_INVALID_VALUE;
  return getAttribute(descSlot(*unwrap(matmulDesc), attr), buf, sizeInBytes, sizeWritten);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
  return createObject(pref, MatmulPreference{});
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete unwrap(pref);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t sizeInBytes) {
  if (!pref)
    return CUBLAS_STATUS_INVALID_VALUE;
  return setAttribute(preferenceSlot(*unwrap(pref), attr), buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    void *buf, size_t sizeInBytes,
                                                    size_t *sizeWritten) {
  if (!pref)
    return CUBLAS_STATUS_INVALID_VALUE;
  return getAttribute(preferenceSlot(*unwrap(pref), attr), buf, sizeInBytes, sizeWritten);
}

} // extern "C"

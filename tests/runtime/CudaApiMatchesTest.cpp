// The runtime declares the CUDA driver types and constants it uses itself
// (src/runtime/CudaApi.h) so that it builds without the toolkit. Where the
// toolkit is installed, this file checks them against cuda.h: it is a test
// that passes by compiling.
#include "runtime/CudaApi.h"
#include "runtime/TensorMap.h"

#include <cuda.h>

#include <cstddef>

namespace cu = pk::rt::cu;

static_assert(cu::CUDA_SUCCESS == CUDA_SUCCESS);
static_assert(cu::CUDA_ERROR_INVALID_VALUE == CUDA_ERROR_INVALID_VALUE);
static_assert(cu::CUDA_ERROR_OUT_OF_MEMORY == CUDA_ERROR_OUT_OF_MEMORY);
static_assert(cu::CUDA_ERROR_STUB_LIBRARY == CUDA_ERROR_STUB_LIBRARY);
static_assert(cu::CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE);
static_assert(cu::CUDA_ERROR_INVALID_DEVICE == CUDA_ERROR_INVALID_DEVICE);
static_assert(cu::CUDA_ERROR_NOT_FOUND == CUDA_ERROR_NOT_FOUND);
static_assert(cu::CUDA_ERROR_NOT_SUPPORTED == CUDA_ERROR_NOT_SUPPORTED);
static_assert(cu::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
static_assert(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
static_assert(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
static_assert(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
static_assert(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ==
              CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
static_assert(cu::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED ==
              CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
static_assert(cu::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH == CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
static_assert(cu::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ==
              CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
static_assert(cu::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
static_assert(cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ==
              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
static_assert(cu::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED ==
              CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
static_assert(cu::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);

static_assert(sizeof(cu::CUdeviceptr) == sizeof(CUdeviceptr));
static_assert(sizeof(cu::CUdevice) == sizeof(CUdevice));
static_assert(sizeof(cu::CUresult) == sizeof(CUresult));

// The launch structs are passed by pointer to cuLaunchKernelEx: their
// layouts must match field by field.
static_assert(sizeof(cu::CUlaunchAttribute) == sizeof(CUlaunchAttribute));
static_assert(offsetof(cu::CUlaunchAttribute, value) == offsetof(CUlaunchAttribute, value));
static_assert(offsetof(cu::CUlaunchAttribute, value.clusterDim.x) ==
              offsetof(CUlaunchAttribute, value.clusterDim.x));
static_assert(offsetof(cu::CUlaunchAttribute, value.clusterDim.z) ==
              offsetof(CUlaunchAttribute, value.clusterDim.z));
static_assert(sizeof(cu::CUlaunchConfig) == sizeof(CUlaunchConfig));
static_assert(offsetof(cu::CUlaunchConfig, sharedMemBytes) ==
              offsetof(CUlaunchConfig, sharedMemBytes));
static_assert(offsetof(cu::CUlaunchConfig, hStream) == offsetof(CUlaunchConfig, hStream));
static_assert(offsetof(cu::CUlaunchConfig, attrs) == offsetof(CUlaunchConfig, attrs));
static_assert(offsetof(cu::CUlaunchConfig, numAttrs) == offsetof(CUlaunchConfig, numAttrs));

// Tensor maps are passed to cuTensorMapEncodeTiled by pointer and to
// kernels by value.
static_assert(sizeof(cu::CUtensorMap) == sizeof(CUtensorMap));
static_assert(alignof(cu::CUtensorMap) == alignof(CUtensorMap));
static_assert(sizeof(cu::cuuint64_t) == sizeof(cuuint64_t));
static_assert(sizeof(cu::cuuint32_t) == sizeof(cuuint32_t));
static_assert(CU_TENSOR_MAP_DATA_TYPE_UINT8 == 0 && CU_TENSOR_MAP_DATA_TYPE_UINT16 == 1 &&
              CU_TENSOR_MAP_DATA_TYPE_UINT32 == 2 && CU_TENSOR_MAP_DATA_TYPE_INT32 == 3 &&
              CU_TENSOR_MAP_DATA_TYPE_UINT64 == 4 && CU_TENSOR_MAP_DATA_TYPE_INT64 == 5 &&
              CU_TENSOR_MAP_DATA_TYPE_FLOAT16 == 6 && CU_TENSOR_MAP_DATA_TYPE_FLOAT32 == 7 &&
              CU_TENSOR_MAP_DATA_TYPE_FLOAT64 == 8 && CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 == 9);
static_assert(int(pk::rt::TmaSwizzle::B128) == CU_TENSOR_MAP_SWIZZLE_128B &&
              int(pk::rt::TmaSwizzle::B64) == CU_TENSOR_MAP_SWIZZLE_64B &&
              int(pk::rt::TmaSwizzle::B32) == CU_TENSOR_MAP_SWIZZLE_32B &&
              int(pk::rt::TmaSwizzle::None) == CU_TENSOR_MAP_SWIZZLE_NONE);
static_assert(int(pk::rt::TmaInterleave::B32) == CU_TENSOR_MAP_INTERLEAVE_32B &&
              int(pk::rt::TmaInterleave::B16) == CU_TENSOR_MAP_INTERLEAVE_16B);
static_assert(int(pk::rt::TmaL2Promotion::B256) == CU_TENSOR_MAP_L2_PROMOTION_L2_256B &&
              int(pk::rt::TmaL2Promotion::B64) == CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
static_assert(int(pk::rt::TmaOobFill::Nan) == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
              int(pk::rt::TmaOobFill::Zero) == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

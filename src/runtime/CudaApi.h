//===- CudaApi.h - The slice of the CUDA driver API the runtime uses -*- C++ -*-===//
//
// The runtime builds without the CUDA toolkit and opens libcuda.so.1 at
// run time, so it declares the few driver types and constants it needs
// itself. They are ABI: the values are copied from cuda.h (CUDA 12/13),
// and tests/runtime/CudaApiMatchesTest.cpp checks them against cuda.h
// wherever the toolkit is installed.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_CUDAAPI_H
#define PK_RUNTIME_CUDAAPI_H

#include <cstddef>

namespace pk::rt::cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;

// CUdevice_attribute
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115;
constexpr int CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120;

// CUfunction_attribute
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14;

// CUlaunchAttributeID
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;

struct CUlaunchAttribute {
  int id;
  char pad[8 - sizeof(int)];
  union {
    char pad[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value;
};

// cuTensorMapEncodeTiled (CUDA 12.0): the opaque 128-byte tensor map a
// kernel takes by value, and its index types. The driver needs 64-byte
// alignment; cuda.h of CUDA 13 declares 128, which this follows.
using cuuint32_t = unsigned;
using cuuint64_t = unsigned long long;
struct alignas(128) CUtensorMap {
  unsigned long long opaque[16];
};

struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};

} // namespace pk::rt::cu

#endif // PK_RUNTIME_CUDAAPI_H

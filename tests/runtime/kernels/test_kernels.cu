// Kernels for the runtime's tests, compiled with nvcc to cubins for
// sm_80 and sm_90a. They stand in for what pkc's CUDA backend emits: C
// linkage, buffers as pointers, symbolic sizes as 64-bit integers, in the
// order the hand-written manifest (kernels.json.in) lists them. The fake
// driver (fake_cuda.cpp) re-implements each one on the host, by name.

// out = x + y over n elements; one thread per element.
extern "C" __global__ void pk_test_add_f32(const float *x, const float *y, float *out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] + y[i];
}

// out = x * x over a rows x cols array.
extern "C" __global__ void pk_test_square_f32(const float *x, float *out, long long rows, long long cols) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < rows * cols)
    out[i] = x[i] * x[i];
}

// out[row] = sum of x[row, :]; one block of 256 threads per row. The row
// is staged through all the dynamic shared memory the launch gave (so a
// launch above 48 KiB fails unless the runtime opted in), read back in
// reverse so each thread reads what others wrote.
extern "C" __global__ void pk_test_rowsum_f32(const float *x, float *out, long long rows, long long cols) {
  extern __shared__ float stage[];
  __shared__ float partial[256];
  unsigned bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  long long capacity = bytes / sizeof(float);
  long long row = blockIdx.x;
  if (row >= rows)
    return;
  float acc = 0.0f;
  for (long long base = 0; base < cols && capacity > 0; base += capacity) {
    long long chunk = cols - base < capacity ? cols - base : capacity;
    for (long long t = threadIdx.x; t < chunk; t += blockDim.x)
      stage[t] = x[row * cols + base + t];
    __syncthreads();
    for (long long t = threadIdx.x; t < chunk; t += blockDim.x)
      acc += stage[chunk - 1 - t];
    __syncthreads();
  }
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[row] = partial[0];
}

// acc += x over n elements (acc is the output, a copy of the input).
extern "C" __global__ void pk_test_accumulate_f32(float *acc, const float *x, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    acc[i] += x[i];
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// out[i] = x[i] + the block's rank in its cluster + 100 * the cluster's
// size in blocks: shows the launch's cluster dimensions (Hopper and newer).
extern "C" __global__ void pk_test_cluster_rank_i32(const int *x, int *out, long long n) {
  unsigned rank, size;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] + int(rank) + 100 * int(size);
}
#endif

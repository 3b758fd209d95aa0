// Stands in for samples/matmul.pk's matmul_scaled export, compiled by
// pkc's CUDA backend: out = (x @ y) * 0.5 with x: f32[M, 256],
// y: f32[256, N]. One block computes a 64 x 64 tile of out (the .pk's
// BLOCK_M x BLOCK_N), on the grid (ceildiv(M, 64), ceildiv(N, 64)); each of
// its 256 threads accumulates a 4 x 4 patch over K in chunks of 32 staged
// through shared memory. matmul.json.in is its manifest.
#define K 256
#define TILE 64
#define CHUNK 32

extern "C" __global__ void matmul_kernel(const float *x, const float *y, float *out, long long m, long long n) {
  __shared__ float xs[TILE][CHUNK + 1];
  __shared__ float ys[CHUNK][TILE + 1];
  long long row0 = (long long)blockIdx.x * TILE, col0 = (long long)blockIdx.y * TILE;
  int tr = threadIdx.x / 16, tc = threadIdx.x % 16; // this thread's 4 x 4 patch
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += CHUNK) {
    for (int i = threadIdx.x; i < TILE * CHUNK; i += blockDim.x) {
      int r = i / CHUNK, c = i % CHUNK;
      xs[r][c] = row0 + r < m ? x[(row0 + r) * K + k0 + c] : 0.0f;
    }
    for (int i = threadIdx.x; i < CHUNK * TILE; i += blockDim.x) {
      int r = i / TILE, c = i % TILE;
      ys[r][c] = col0 + c < n ? y[(long long)(k0 + r) * n + col0 + c] : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < CHUNK; ++k)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][j] += xs[tr * 4 + i][k] * ys[k][tc * 4 + j];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      long long r = row0 + tr * 4 + i, c = col0 + tc * 4 + j;
      if (r < m && c < n)
        out[r * n + c] = acc[i][j] * 0.5f;
    }
}

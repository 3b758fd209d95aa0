// Stands in for `pkc compile samples/add.pk --target=cuda:...` until the
// CUDA backend lands: the same export (add(x: f32[N], y: f32[N]) -> f32[N])
// with the launch ABI the manifest describes (buffers as pointers, then
// the symbolic size N as a 64-bit integer). add.json.in is its manifest.
extern "C" __global__ void add_kernel(const float *x, const float *y, float *out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] + y[i];
}

// matmul.cpp - Run samples/matmul.pk's matmul_scaled from C++ through the
// pkc runtime's C++ wrapper.
//
//   matmul_host build/samples/runtime/kernels/matmul.json [M N]
//
// out = (x @ y) * 0.5 for x: f32[M, 256], y: f32[256, N]. The output's
// shape comes from the kernel's own signature (paramShape); the result is
// checked against a double-precision product on the host (of operands
// truncated to TF32, as the GPU multiplies them). Exits 0 when it
// matches, 1 otherwise, 77 when there is no GPU.
#include <pk/runtime.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

/// `v` as the tensor cores read an f32 word for a TF32 product: sign,
/// exponent and the 10 high mantissa bits.
static float tf32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits &= ~uint32_t{(1u << 13) - 1};
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr, "usage: %s matmul.json [M N]\n", argv[0]);
    return 2;
  }
  int64_t m = argc == 4 ? std::atoll(argv[2]) : 300, n = argc == 4 ? std::atoll(argv[3]) : 200;
  const int64_t k = 256;
  int devices = 0;
  if (pk_device_count(&devices) != PK_OK || devices == 0) {
    std::printf("no CUDA GPU: %s\n", pk_last_error());
    return 77;
  }
  try {
    pk::Module module = pk::Module::load(argv[1]);
    pk::Kernel matmul = module.kernel("matmul_scaled");
    int device = module.device();
    std::printf("loaded %s for device %d\n", module.target().c_str(), device);

    std::mt19937 rng(42);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> x(size_t(m * k)), y(size_t(k * n));
    for (float &v : x)
      v = uniform(rng);
    for (float &v : y)
      v = uniform(rng);
    // The kernel says how big its output is for these sizes (M, N).
    std::vector<int64_t> outShape = matmul.paramShape(2, {m, n});

    pk::DeviceBuffer dx = pk::DeviceBuffer::from(device, x), dy = pk::DeviceBuffer::from(device, y);
    pk::DeviceBuffer dout =
        pk::DeviceBuffer::allocate(device, size_t(outShape[0] * outShape[1]) * sizeof(float));
    pk::Stream stream = pk::Stream::create(device);
    pk::Tensor tx = pk::Tensor::of(static_cast<float *>(dx.data()), {m, k}, device);
    pk::Tensor ty = pk::Tensor::of(static_cast<float *>(dy.data()), {k, n}, device);
    pk::Tensor tout = pk::Tensor::of(static_cast<float *>(dout.data()), outShape, device);
    matmul.launch({tx.dl(), ty.dl(), tout.dl()}, stream.get());
    stream.synchronize();
    std::vector<float> out = dout.download<float>();

    // The sample's dot is at JAX's default precision, which on the GPU
    // multiplies operands truncated to TF32 (docs/cuda.md): the expected
    // products are of truncated operands. Float accumulation over K = 256
    // terms of magnitude <= 1: allow a relative error of 1e-5 of the sum
    // of magnitudes.
    int64_t wrong = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          double product = double(tf32(x[size_t(i * k + p)])) * tf32(y[size_t(p * n + j)]);
          sum += product;
          magnitude += std::abs(product);
        }
        double expected = sum * 0.5, got = out[size_t(i * n + j)];
        if (std::abs(got - expected) > 1e-5 * magnitude + 1e-6 && wrong++ < 5)
          std::fprintf(stderr, "out[%lld, %lld] = %g, expected %g\n", (long long)i, (long long)j,
                       got, expected);
      }
    std::printf("matmul_scaled: %lld of %lld elements match\n", (long long)(m * n - wrong),
                (long long)(m * n));
    return wrong ? 1 : 0;
  } catch (const pk::Error &e) {
    std::fprintf(stderr, "%s: %s\n", pk_status_name(e.code()), e.what());
    return 1;
  }
}

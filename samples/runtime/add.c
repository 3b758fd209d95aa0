/* add.c - Run samples/add.pk's export from C through the pkc runtime.
 *
 *   add_host build/samples/runtime/kernels/add.json [N]
 *
 * Loads the manifest (the runtime picks the artifact for the GPU), copies
 * two random vectors to the device, launches `add` and checks every
 * element of the result against the same sum on the host. Exits 0 when all
 * match, 1 on a mismatch or an error, 77 when there is no GPU.
 */
#include <pk/runtime.h>

#include <stdio.h>
#include <stdlib.h>

/* Prints the failed call's message and returns from main. */
#define CHECK(call)                                                                                \
  do {                                                                                             \
    pk_status status_ = (call);                                                                    \
    if (status_ != PK_OK) {                                                                        \
      fprintf(stderr, "%s: %s\n", pk_status_name(status_), pk_last_error());                       \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s add.json [N]\n", argv[0]);
    return 2;
  }
  int64_t n = argc > 2 ? atoll(argv[2]) : 1000003;
  int devices = 0;
  if (pk_device_count(&devices) != PK_OK || devices == 0) {
    printf("no CUDA GPU: %s\n", devices == 0 && *pk_last_error() ? pk_last_error() : "no devices");
    return 77;
  }

  pk_module *module;
  CHECK(pk_module_load(argv[1], &module));
  pk_kernel *add;
  CHECK(pk_module_get(module, "add", &add));
  printf("loaded %s for device %d\n", pk_module_target(module), pk_module_device(module));

  size_t bytes = (size_t)n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
  if (!x || !y || !out)
    return 1;
  srand(7);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    y[i] = (float)(i % 1000);
  }

  int device = pk_module_device(module);
  void *dx, *dy, *dout;
  CHECK(pk_device_alloc(device, bytes, &dx));
  CHECK(pk_device_alloc(device, bytes, &dy));
  CHECK(pk_device_alloc(device, bytes, &dout));
  CHECK(pk_memcpy_to_device(device, dx, x, bytes));
  CHECK(pk_memcpy_to_device(device, dy, y, bytes));

  /* One DLTensor per param: x, y, then the output. NULL strides: dense. */
  int64_t shape[1] = {n};
  DLTensor args[3];
  void *data[3] = {dx, dy, dout};
  for (int i = 0; i < 3; ++i) {
    args[i].data = data[i];
    args[i].device.device_type = kDLCUDA;
    args[i].device.device_id = device;
    args[i].ndim = 1;
    args[i].dtype.code = kDLFloat;
    args[i].dtype.bits = 32;
    args[i].dtype.lanes = 1;
    args[i].shape = shape;
    args[i].strides = NULL;
    args[i].byte_offset = 0;
  }
  CHECK(pk_launch(add, args, 3, NULL));
  CHECK(pk_memcpy_to_host(device, out, dout, bytes)); /* waits for the launch */

  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    if (out[i] != x[i] + y[i]) {
      if (wrong++ < 5)
        fprintf(stderr, "out[%lld] = %g, expected %g\n", (long long)i, out[i], x[i] + y[i]);
    }
  printf("add: %lld of %lld elements match\n", (long long)(n - wrong), (long long)n);

  pk_device_free(device, dx);
  pk_device_free(device, dy);
  pk_device_free(device, dout);
  pk_module_destroy(module);
  free(x);
  free(y);
  free(out);
  return wrong ? 1 : 0;
}

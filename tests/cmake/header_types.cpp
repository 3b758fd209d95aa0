// Compiled (not run) by tests/cmake against the launch headers of
// samples/cmake-app: the typed launchers take the right pointers and
// ranks, and with WRONG_DTYPE or WRONG_RANK the C++ compiler refuses the
// call, which is the point of generating them.
#include "add.pk.h"
#include "affine.pk.h"

#include <cstdint>

int main() {
  pk::kernels::add add;
  float *x = nullptr;
  const int64_t n = 8;
#if defined(WRONG_DTYPE)
  double *wrong = nullptr;
  add(nullptr, wrong, {n}, x, {n}, x, {n});
#elif defined(WRONG_RANK)
  add(nullptr, x, {n, 2}, x, {n}, x, {n});
#endif
  return add.tryLaunch(nullptr, x, {n}, x, {n}, x, {n}).ok() ? 0 : 1;
}

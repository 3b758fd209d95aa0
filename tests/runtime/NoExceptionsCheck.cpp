// pk/runtime.hpp compiles with -fno-exceptions: only its try* forms exist.
#include "pk/runtime.hpp"

#if PK_RUNTIME_EXCEPTIONS
#error "PK_RUNTIME_EXCEPTIONS should be 0 under -fno-exceptions"
#endif

pk::Status pkNoExceptionsCheck(const char *path) {
  pk::Module module;
  pk::Status s = pk::Module::tryLoad(path, module);
  if (!s)
    return s;
  pk::Kernel kernel;
  return module.tryKernel("add", kernel);
}

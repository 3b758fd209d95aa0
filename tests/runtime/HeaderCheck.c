/* pk/runtime.h is a C header: this file compiles it as strict C99. */
#include "pk/runtime.h"

int pk_header_check(void) {
  pk_load_options options;
  pk_load_options_init(&options);
  return options.device == -1 && PK_OK == 0 ? 0 : 1;
}

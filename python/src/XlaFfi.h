//===- XlaFfi.h - pkc exports as an XLA FFI custom call ---------*- C++ -*-===//
#ifndef PKC_PYTHON_XLAFFI_H
#define PKC_PYTHON_XLAFFI_H

#include "Modules.h"

#include <nanobind/nanobind.h>

namespace pkc {

/// Adds has_xla_ffi, xla_register() and xla_handlers() to the module (see
/// XlaFfi.cpp).
void defineXlaFfi(nanobind::module_ &m);

} // namespace pkc

#endif // PKC_PYTHON_XLAFFI_H

//===- Errors.h - pk_status as Python exceptions ----------------*- C++ -*-===//
//
// The runtime reports every failure as a pk_status and a sentence
// (pk_last_error). The extension raises them as exceptions of four
// classes, each carrying the status's name and number, so Python code can
// catch a family (`except pkc.ArgumentError`) or test the exact status
// (`e.status == "PK_ERROR_SHAPE"`):
//
//   pkc.Error            every runtime failure (RuntimeError)
//   pkc.ArgumentError    the arguments do not fit the export (also ValueError)
//   pkc.LoadError        the manifest or artifact cannot be loaded
//   pkc.DeviceError      the driver, the device, or a launch failed
//
//===----------------------------------------------------------------------===//
#ifndef PKC_PYTHON_ERRORS_H
#define PKC_PYTHON_ERRORS_H

#include "pk/runtime.h"

#include <nanobind/nanobind.h>

#include <string>

namespace pkc {

/// Creates the exception classes and adds them to `m`.
void defineErrors(nanobind::module_ &m);

/// The exception object for `status` with `message`.
nanobind::object makeError(pk_status status, const std::string &message);

/// Raises (as a C++ exception nanobind turns into the Python one) the
/// exception for `status` with `message`.
[[noreturn]] void raise(pk_status status, const std::string &message);

/// Raises for `status` with pk_last_error(), prefixed with `context` when
/// given. Does nothing for PK_OK.
inline void check(pk_status status, const char *context = nullptr) {
  if (status != PK_OK)
    raise(status, context ? std::string(context) + ": " + pk_last_error() : pk_last_error());
}

} // namespace pkc

#endif // PKC_PYTHON_ERRORS_H

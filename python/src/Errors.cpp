//===- Errors.cpp - pk_status as Python exceptions ------------------------===//
#include "Errors.h"

#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace pkc {
namespace {

PyObject *errorClass = nullptr, *argumentErrorClass = nullptr, *loadErrorClass = nullptr,
         *deviceErrorClass = nullptr;

PyObject *classFor(pk_status status) {
  switch (status) {
  case PK_ERROR_INVALID_ARGUMENT:
  case PK_ERROR_ARGUMENT_COUNT:
  case PK_ERROR_DEVICE_MISMATCH:
  case PK_ERROR_DTYPE:
  case PK_ERROR_RANK:
  case PK_ERROR_SHAPE:
  case PK_ERROR_LAYOUT:
  case PK_ERROR_ALIGNMENT:
  case PK_ERROR_ALIASING:
    return argumentErrorClass;
  case PK_ERROR_IO:
  case PK_ERROR_MANIFEST:
  case PK_ERROR_MANIFEST_VERSION:
  case PK_ERROR_ARTIFACT:
  case PK_ERROR_NO_COMPATIBLE_ARTIFACT:
  case PK_ERROR_NOT_FOUND:
    return loadErrorClass;
  case PK_ERROR_DRIVER_UNAVAILABLE:
  case PK_ERROR_NO_DEVICE:
  case PK_ERROR_UNSUPPORTED:
  case PK_ERROR_OUT_OF_MEMORY:
  case PK_ERROR_CUDA:
    return deviceErrorClass;
  default:
    return errorClass;
  }
}

PyObject *newClass(nb::module_ &m, const char *name, const char *doc, PyObject *bases) {
  std::string qualified = std::string("pkc.") + name;
  PyObject *cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!cls)
    throw nb::python_error();
  m.attr(name) = nb::handle(cls);
  return cls;
}

} // namespace

void defineErrors(nb::module_ &m) {
  m.def(
      "make_error",
      [](const std::string &status, const std::string &message) {
        for (int s = PK_OK + 1; s <= PK_ERROR_INTERNAL; ++s)
          if (status == pk_status_name(pk_status(s)))
            return makeError(pk_status(s), message);
        throw nb::value_error(("unknown pk_status name " + status).c_str());
      },
      nb::arg("status"), nb::arg("message"),
      "The exception the runtime would raise for `status` (\"PK_ERROR_SHAPE\") and `message`.");
  errorClass = newClass(m, "Error",
                        "A failure the pkc runtime reported. `status` is the pk_status name "
                        "(\"PK_ERROR_SHAPE\"), `code` its number.",
                        PyExc_RuntimeError);
  nb::object argumentBases = nb::make_tuple(nb::handle(errorClass), nb::handle(PyExc_ValueError));
  argumentErrorClass = newClass(m, "ArgumentError",
                                "The arguments do not fit the export: count, device, dtype, rank, "
                                "shape, layout, alignment or aliasing.",
                                argumentBases.ptr());
  loadErrorClass = newClass(m, "LoadError",
                            "A manifest or artifact that cannot be read or used, or an export "
                            "that does not exist.",
                            errorClass);
  deviceErrorClass = newClass(m, "DeviceError",
                              "No driver or device, a launch the device cannot run, or a CUDA "
                              "driver call that failed.",
                              errorClass);
}

nb::object makeError(pk_status status, const std::string &message) {
  nb::gil_scoped_acquire gil; // callers may have released it
  PyObject *cls = classFor(status);
  nb::object error = nb::steal(PyObject_CallFunction(cls, "s", message.c_str()));
  if (!error.is_valid())
    throw nb::python_error();
  error.attr("status") = pk_status_name(status);
  error.attr("code") = int(status);
  return error;
}

void raise(pk_status status, const std::string &message) {
  nb::gil_scoped_acquire gil;
  nb::object error = makeError(status, message);
  PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(error.ptr())), error.ptr());
  throw nb::python_error();
}

} // namespace pkc

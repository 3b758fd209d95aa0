//===- NumpyFormat.h - Print arrays the way NumPy does ----------*- C++ -*-===//
//
// `pkc run --print` output: NumPy's default str() of an array (precision 8,
// shortest round-trip digits, aligned columns, scientific notation for very
// large or small magnitudes, lines wrapped at 75 columns, and summarized
// with '...' above 1000 elements).
//
//===----------------------------------------------------------------------===//
#ifndef PK_INTERPRETER_NUMPYFORMAT_H
#define PK_INTERPRETER_NUMPYFORMAT_H

#include "interpreter/HostArray.h"

#include <string>

namespace pk {

std::string formatNumpy(const HostArray &array);

} // namespace pk

#endif // PK_INTERPRETER_NUMPYFORMAT_H

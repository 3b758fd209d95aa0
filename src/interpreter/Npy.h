//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes the .npy format (versions 1-3, little-endian, C order).
// NumPy has no bfloat16; like ml_dtypes, pkc writes bf16 arrays with the
// opaque descr '<V2', and reads '<V2' as bf16.
//
//===----------------------------------------------------------------------===//
#ifndef PK_INTERPRETER_NPY_H
#define PK_INTERPRETER_NPY_H

#include "interpreter/HostArray.h"

#include <optional>
#include <string>

namespace pk {

/// Reads `path`; on failure returns nullopt and sets `error`.
std::optional<HostArray> readNpy(const std::string &path, std::optional<DType> expected,
                                 std::string &error);
/// Parses .npy bytes (the contents of a file).
std::optional<HostArray> parseNpy(const std::string &bytes, std::optional<DType> expected,
                                  std::string &error);
/// Writes `array` to `path`; returns false and sets `error` on failure.
bool writeNpy(const std::string &path, const HostArray &array, std::string &error);
/// The .npy bytes of an array.
std::string serializeNpy(const HostArray &array);

} // namespace pk

#endif // PK_INTERPRETER_NPY_H

//===- Sha256.h - SHA-256 of an artifact's bytes ----------------*- C++ -*-===//
//
// The manifest records each artifact's SHA-256 so that a stale or corrupt
// file is refused. The runtime carries its own implementation (FIPS 180-4)
// to stay free of LLVM and OpenSSL.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_SHA256_H
#define PK_RUNTIME_SHA256_H

#include <cstddef>
#include <string>

namespace pk::rt {

/// Lowercase hex SHA-256 of `size` bytes at `data`.
std::string sha256Hex(const void *data, size_t size);

} // namespace pk::rt

#endif // PK_RUNTIME_SHA256_H

//===- Validate.cpp -------------------------------------------------------===//
//
// Validation runs in phases so that each message can say what is
// expected: first each array on its own (device, dtype, rank), then the
// symbols are read from their binding dimensions, then every shape is
// compared with its size expressions under those values, then layout and
// alignment, and last the outputs' overlap with other arguments.
//
//===----------------------------------------------------------------------===//
#include "runtime/Validate.h"

#include "runtime/Error.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace pk::rt {

namespace {

std::string list(const int64_t *values, int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::string expectedShape(const Param &p, const Export &e) {
  std::string out = "[";
  for (size_t i = 0; i < p.shape.size(); ++i)
    out += (i ? ", " : "") + p.shape[i].str(e.symbolNames);
  return out + "]";
}

/// The tensor's DLPack device type as the integer a C caller stored: any
/// int may arrive there, and reading one that names no DLDeviceType
/// through the enum type is undefined behavior in C++.
int32_t deviceTypeOf(const DLTensor &t) {
  static_assert(sizeof(t.device.device_type) == sizeof(int32_t), "DLDeviceType is a C int");
  int32_t value;
  std::memcpy(&value, &t.device.device_type, sizeof value);
  return value;
}

std::string hex(uint64_t v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%" PRIx64, v);
  return buffer;
}

class Validator {
public:
  Validator(const Export &e, const DLTensor *args, int ordinal, BoundArgs &out)
      : e_(e), args_(args), ordinal_(ordinal), out_(out) {}

  void run(size_t numArgs);

private:
  [[noreturn]] void error(pk_status status, size_t i, const std::string &message) const {
    fail(status, e_.name + ": " + (e_.params[i].output ? "output" : "argument") + " \"" +
                     e_.params[i].name + "\" (param " + std::to_string(i) + ") " + message);
  }
  /// "N = 8 (dimension 0 of \"x\")" for the symbols `shape` uses.
  std::string symbolValues(const Param &p) const;
  void checkArray(size_t i);
  void checkShape(size_t i);
  void checkLayout(size_t i);
  void checkAliasing();

  const Export &e_;
  const DLTensor *args_;
  int ordinal_;
  BoundArgs &out_;
};

void Validator::run(size_t numArgs) {
  if (numArgs != e_.params.size()) {
    std::string names;
    for (const Param &p : e_.params)
      names += (names.empty() ? "" : ", ") + p.name;
    fail(PK_ERROR_ARGUMENT_COUNT, e_.name + " takes " + std::to_string(e_.params.size()) +
                                      " arrays (" + std::to_string(e_.numInputs) +
                                      " input(s) then " +
                                      std::to_string(e_.params.size() - e_.numInputs) +
                                      " output(s): " + names + "), got " + std::to_string(numArgs));
  }
  if (!args_ && numArgs)
    fail(PK_ERROR_INVALID_ARGUMENT, e_.name + ": the argument array is null");
  out_.symbols.assign(e_.symbols.size(), 0);
  out_.address.assign(e_.params.size(), 0);
  out_.bytes.assign(e_.params.size(), 0);
  for (size_t i = 0; i < e_.params.size(); ++i)
    checkArray(i);
  for (size_t s = 0; s < e_.symbols.size(); ++s)
    out_.symbols[s] = args_[e_.symbols[s].param].shape[e_.symbols[s].dim];
  for (size_t i = 0; i < e_.params.size(); ++i)
    checkShape(i);
  for (size_t i = 0; i < e_.params.size(); ++i)
    checkLayout(i);
  checkAliasing();
}

void Validator::checkArray(size_t i) {
  const Param &p = e_.params[i];
  const DLTensor &t = args_[i];
  int32_t deviceType = deviceTypeOf(t);
  if (deviceType != kDLCUDA && deviceType != kDLCUDAManaged)
    error(PK_ERROR_DEVICE_MISMATCH, i,
          "is not in CUDA device memory (its DLPack device type is " + std::to_string(deviceType) +
              "; expected kDLCUDA (2) or kDLCUDAManaged (13))");
  // Managed memory is reachable from every device; its device_id means little.
  if (ordinal_ >= 0 && deviceType == kDLCUDA && t.device.device_id != ordinal_)
    error(PK_ERROR_DEVICE_MISMATCH, i,
          "is on CUDA device " + std::to_string(t.device.device_id) +
              ", but the module is loaded on device " + std::to_string(ordinal_));
  if (!(t.dtype == p.dtype->dl))
    error(PK_ERROR_DTYPE, i, "is " + describe(t.dtype) + ", expected " + p.dtype->name);
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    error(PK_ERROR_INVALID_ARGUMENT, i,
          "is not a valid DLTensor (ndim " + std::to_string(t.ndim) +
              (t.ndim > 0 ? ", null shape)" : ")"));
  if (size_t(t.ndim) != p.shape.size())
    error(PK_ERROR_RANK, i,
          "has " + std::to_string(t.ndim) + " dimension(s) " + list(t.shape, t.ndim) +
              ", expected " + std::to_string(p.shape.size()) + " " + expectedShape(p, e_));
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] < 0)
      error(PK_ERROR_SHAPE, i, "has a negative dimension: shape " + list(t.shape, t.ndim));
}

std::string Validator::symbolValues(const Param &p) const {
  std::vector<bool> used(e_.symbols.size(), false);
  for (const SizeExpr &d : p.shape) {
    // Which symbols an expression uses is not recorded; a lone symbol is
    // the common case, and compound ones list every symbol.
    unsigned s;
    if (d.isSymbol(s))
      used[s] = true;
    else if (!d.isConstant())
      used.assign(used.size(), true);
  }
  std::string out;
  for (size_t s = 0; s < e_.symbols.size(); ++s) {
    if (!used[s])
      continue;
    const SymbolBinding &b = e_.symbols[s];
    out += std::string(out.empty() ? " with " : ", ") + b.name + " = " +
           std::to_string(out_.symbols[s]) + " (dimension " + std::to_string(b.dim) + " of \"" +
           e_.params[b.param].name + "\")";
  }
  return out;
}

void Validator::checkShape(size_t i) {
  const Param &p = e_.params[i];
  const DLTensor &t = args_[i];
  for (size_t d = 0; d < p.shape.size(); ++d) {
    int64_t expected = 0;
    std::string why;
    if (!p.shape[d].evaluate(out_.symbols.data(), expected, why))
      error(PK_ERROR_SHAPE, i,
            "has a size the kernels cannot take: dimension " + std::to_string(d) + " is " +
                p.shape[d].str(e_.symbolNames) + ", which gives " + why + symbolValues(p));
    if (t.shape[d] != expected) {
      std::string values;
      for (size_t k = 0; k < p.shape.size(); ++k) {
        int64_t v = 0;
        std::string ignored;
        values += (k ? ", " : "") +
                  (p.shape[k].evaluate(out_.symbols.data(), v, ignored) ? std::to_string(v) : "?");
      }
      bool symbolic = expectedShape(p, e_) != "[" + values + "]";
      error(PK_ERROR_SHAPE, i,
            "has shape " + list(t.shape, t.ndim) + ", expected " + expectedShape(p, e_) +
                (symbolic ? " = [" + values + "]" + symbolValues(p) : ""));
    }
  }
}

void Validator::checkLayout(size_t i) {
  const Param &p = e_.params[i];
  const DLTensor &t = args_[i];
  uint64_t elements = 1;
  for (int d = 0; d < t.ndim; ++d)
    if (__builtin_mul_overflow(elements, uint64_t(t.shape[d]), &elements))
      error(PK_ERROR_SHAPE, i, "is too large: shape " + list(t.shape, t.ndim));
  uint64_t bytes;
  if (__builtin_mul_overflow(elements, uint64_t(p.dtype->bytes), &bytes))
    error(PK_ERROR_SHAPE, i, "is too large: shape " + list(t.shape, t.ndim));
  uint64_t address = uint64_t(uintptr_t(t.data)) + t.byte_offset;
  out_.address[i] = address;
  out_.bytes[i] = bytes;
  if (elements == 0)
    return; // nothing is read or written: any layout and address will do
  // Dense row-major: each stride is the product of the sizes after it.
  // Dimensions of size 1 are never stepped over, so their stride is free
  // (as NumPy and PyTorch treat contiguity).
  // The element count fits in 64 bits (checked above), so these products
  // do not overflow.
  if (t.strides) {
    uint64_t expected = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
      if (t.shape[d] != 1 && uint64_t(t.strides[d]) != expected) {
        std::vector<int64_t> dense(size_t(t.ndim));
        uint64_t s = 1;
        for (int k = t.ndim - 1; k >= 0; --k) {
          dense[size_t(k)] = int64_t(s);
          s *= uint64_t(t.shape[k]);
        }
        error(PK_ERROR_LAYOUT, i,
              "has strides " + list(t.strides, t.ndim) + " (in elements) for shape " +
                  list(t.shape, t.ndim) + "; the kernels need a dense row-major array, strides " +
                  list(dense.data(), t.ndim) + " (or NULL)");
      }
      expected *= uint64_t(t.shape[d]);
    }
  }
  if (!t.data)
    error(PK_ERROR_INVALID_ARGUMENT, i, "has a null data pointer");
  if (address % p.alignment)
    error(PK_ERROR_ALIGNMENT, i,
          "is at address " + hex(address) + ", which is not " + std::to_string(p.alignment) +
              "-byte aligned as the kernels assume");
}

void Validator::checkAliasing() {
  // Kernels write outputs while reading inputs: an output may share
  // memory with nothing else. Inputs may share memory with each other.
  for (size_t o = e_.numInputs; o < e_.params.size(); ++o) {
    if (!out_.bytes[o])
      continue;
    for (size_t i = 0; i < e_.params.size(); ++i) {
      if (i == o || !out_.bytes[i])
        continue;
      // 128-bit ends: a bogus address near 2^64 must not wrap around.
      unsigned __int128 a = out_.address[o], b = out_.address[i];
      if (a < b + out_.bytes[i] && b < a + out_.bytes[o])
        error(PK_ERROR_ALIASING, o,
              "overlaps " + std::string(e_.params[i].output ? "output" : "argument") + " \"" +
                  e_.params[i].name + "\" (param " + std::to_string(i) +
                  "); an output must not share memory with any other argument");
    }
  }
}

} // namespace

void validate(const Export &e, const DLTensor *args, size_t numArgs, int ordinal, BoundArgs &out) {
  Validator(e, args, ordinal, out).run(numArgs);
}

} // namespace pk::rt

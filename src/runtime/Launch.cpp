//===- Launch.cpp - Running an export's program on a stream ---------------===//
//
// A launch validates its arguments, allocates the program's temporaries
// (one block, stream-ordered where the device has memory pools), runs the
// steps in order on the caller's stream, and frees the temporaries in
// stream order. Every size is evaluated from the symbols validation bound;
// all scratch state is thread-local, so concurrent launches share nothing
// but read-only module data.
//
//===----------------------------------------------------------------------===//
#include "runtime/Launch.h"

#include "runtime/Error.h"
#include "runtime/Validate.h"

#include <climits>
#include <cstring>

namespace pk::rt {

namespace {

/// Temporaries start at multiples of this (what cuMemAlloc guarantees for
/// a whole allocation), so each meets any alignment a kernel assumes.
constexpr uint64_t kTemporaryAlignment = 256;

struct Scratch {
  BoundArgs bound;
  std::vector<uint64_t> tempOffset, tempBytes;
  std::vector<uint64_t> argValues; ///< pointers and symbols: 8 bytes each
  /// Tensor maps, passed by value: 128 bytes, 64-byte aligned each.
  std::vector<cu::CUtensorMap> tensorMaps;
  std::vector<void *> argPointers;
};

thread_local Scratch scratch;

/// The program's temporaries, freed in stream order when the launch ends
/// (whether it succeeded or not).
class Temporaries {
public:
  Temporaries(const Driver &d, const Device &dev, cu::CUstream stream)
      : d_(d), dev_(dev), stream_(stream) {}
  ~Temporaries() {
    if (!base_)
      return;
    if (async_) {
      d_.memFreeAsync(base_, stream_);
    } else {
      // Without stream-ordered allocation, the memory may only go once
      // the work that uses it is done.
      d_.streamSynchronize(stream_);
      d_.memFree(base_);
    }
  }
  void allocate(uint64_t bytes) {
    if (!bytes)
      return;
    async_ = dev_.memoryPools;
    cu::CUresult r = async_ ? d_.memAllocAsync(&base_, bytes, stream_) : d_.memAlloc(&base_, bytes);
    if (r != cu::CUDA_SUCCESS) {
      base_ = 0;
      d_.check(r, std::string(async_ ? "cuMemAllocAsync" : "cuMemAlloc") + " of " +
                      std::to_string(bytes) + " bytes for temporaries");
    }
  }
  uint64_t base() const { return base_; }

private:
  const Driver &d_;
  const Device &dev_;
  cu::CUstream stream_;
  cu::CUdeviceptr base_ = 0;
  bool async_ = false;
};

int64_t evaluate(const SizeExpr &e, const Export &exp, const int64_t *symbols,
                 const std::string &what) {
  int64_t value = 0;
  std::string why;
  if (!e.evaluate(symbols, value, why)) {
    std::string values;
    for (size_t s = 0; s < exp.symbols.size(); ++s)
      values += (s ? ", " : "") + exp.symbols[s].name + " = " + std::to_string(symbols[s]);
    fail(PK_ERROR_SHAPE, exp.name + ": " + what + " " + e.str(exp.symbolNames) + " gives " + why +
                             (values.empty() ? "" : " with " + values));
  }
  return value;
}

uint64_t bufferAddress(const BufferRef &b, const Scratch &s, uint64_t tempBase) {
  return (b.kind == BufferRef::Kind::Param ? s.bound.address[b.index]
                                           : tempBase + s.tempOffset[b.index]) +
         b.offset;
}
/// The bytes from the view's start to the buffer's end (0 past it).
uint64_t bufferBytes(const BufferRef &b, const Scratch &s) {
  uint64_t whole = b.kind == BufferRef::Kind::Param ? s.bound.bytes[b.index] : s.tempBytes[b.index];
  return whole > b.offset ? whole - b.offset : 0;
}
std::string bufferName(const BufferRef &b, const Export &e) {
  return b.kind == BufferRef::Kind::Param ? "\"" + e.params[b.index].name + "\""
                                          : "temporary " + std::to_string(b.index);
}

void copy(const pk_kernel &k, const CopyStep &c, size_t step, Scratch &s, uint64_t tempBase,
          cu::CUstream stream) {
  const Export &e = *k.exp;
  const Driver &d = *k.module->driver;
  std::string where = "copy (step " + std::to_string(step) + ")";
  int64_t bytes = evaluate(c.bytes, e, s.bound.symbols.data(), where + " of");
  if (bytes < 0 || uint64_t(bytes) > bufferBytes(c.from, s) ||
      uint64_t(bytes) > bufferBytes(c.to, s))
    fail(PK_ERROR_MANIFEST, e.name + ": " + where + " of " + std::to_string(bytes) +
                                " bytes from " + bufferName(c.from, e) + " (" +
                                std::to_string(bufferBytes(c.from, s)) + " bytes) to " +
                                bufferName(c.to, e) + " (" + std::to_string(bufferBytes(c.to, s)) +
                                " bytes) does not fit; the manifest is inconsistent");
  uint64_t from = bufferAddress(c.from, s, tempBase), to = bufferAddress(c.to, s, tempBase);
  if (bytes == 0 || from == to)
    return;
  d.check(d.memcpyDtoDAsync(to, from, size_t(bytes), stream), "cuMemcpyDtoDAsync (" + where + ")");
}

/// Encodes a tensor_map argument for this launch's sizes and buffers:
/// the manifest fixed the box and modes, the symbols give the shape and
/// strides, the buffer its address. Checked against
/// cuTensorMapEncodeTiled's rules first, so that a bad one is a message.
void encodeTensorMap(const pk_kernel &k, const TensorMapArg &t, const Scratch &s, uint64_t tempBase,
                     const std::string &where, cu::CUtensorMap &out) {
  const Export &e = *k.exp;
  TensorMapDesc d = t.fixed;
  d.address = bufferAddress(t.buffer, s, tempBase);
  const int64_t *symbols = s.bound.symbols.data();
  // The manifest lists dimensions outermost first; CUDA innermost first.
  for (unsigned i = 0; i < d.rank; ++i) {
    int64_t n =
        evaluate(t.shape[i], e, symbols, where + " tensor map dimension " + std::to_string(i));
    d.dims[d.rank - 1 - i] = n < 0 ? 0 : uint64_t(n);
  }
  d.strides[0] = d.elementBytes;
  for (unsigned i = 0; i + 1 < d.rank; ++i) {
    int64_t bytes =
        evaluate(t.strides[i], e, symbols, where + " tensor map stride " + std::to_string(i));
    d.strides[d.rank - 1 - i] = bytes < 0 ? 0 : uint64_t(bytes);
  }
  // The box must lie within the buffer it names: the last element's byte
  // must be inside it.
  uint64_t last = d.elementBytes;
  for (unsigned i = 0; i < d.rank; ++i)
    last += (d.dims[i] ? d.dims[i] - 1 : 0) * d.strides[i];
  std::string why = checkTensorMap(d);
  if (!why.empty() && t.optional) {
    // Sizes TMA cannot take (the buffer's alignment and the box were
    // checked before): the kernel tests the same rules and copies
    // without the map.
    std::memset(&out, 0, sizeof out);
    return;
  }
  if (why.empty() && last > bufferBytes(t.buffer, s))
    why = "it spans " + std::to_string(last) + " bytes of " + bufferName(t.buffer, e) +
          ", which has " + std::to_string(bufferBytes(t.buffer, s));
  if (!why.empty())
    fail(PK_ERROR_SHAPE, e.name + ": " + where + ": the tensor map over " +
                             bufferName(t.buffer, e) +
                             " cannot be encoded for these sizes: " + why);
  const Driver &drv = *k.module->driver;
  cu::cuuint64_t dims[kMaxTensorMapRank], strides[kMaxTensorMapRank];
  cu::cuuint32_t box[kMaxTensorMapRank], elementStrides[kMaxTensorMapRank];
  for (unsigned i = 0; i < d.rank; ++i) {
    dims[i] = d.dims[i];
    box[i] = d.box[i];
    elementStrides[i] = d.elementStrides[i];
    if (i > 0)
      strides[i - 1] = d.strides[i];
  }
  drv.check(drv.tensorMapEncodeTiled(&out, d.dataType, d.rank, reinterpret_cast<void *>(d.address),
                                     dims, strides, box, elementStrides, int(d.interleave),
                                     int(d.swizzle), int(d.l2Promotion), int(d.oobFill)),
            "cuTensorMapEncodeTiled for " + where);
}

/// Raises `f`'s dynamic shared memory opt-in to `bytes` if it is below.
void optIn(const pk_kernel &k, Function &f, int64_t bytes, const std::string &where) {
  if (bytes <= f.dynamicSharedLimit.load(std::memory_order_acquire))
    return;
  const Device &dev = *k.module->device;
  int64_t limit = int64_t(dev.maxSharedMemoryOptIn) - f.staticSharedMemory;
  if (bytes > limit)
    fail(PK_ERROR_UNSUPPORTED, k.exp->name + ": " + where + " needs " + std::to_string(bytes) +
                                   " bytes of dynamic shared memory for these sizes; " +
                                   dev.describe() + " allows at most " + std::to_string(limit));
  std::lock_guard<std::mutex> lock(f.optInMutex);
  if (bytes <= f.dynamicSharedLimit.load(std::memory_order_relaxed))
    return;
  const Driver &d = *k.module->driver;
  d.check(
      d.funcSetAttribute(f.handle, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(bytes)),
      "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) for " + where);
  f.dynamicSharedLimit.store(int(bytes), std::memory_order_release);
}

void launchStep(const pk_kernel &k, const LaunchStep &l, Function &f, size_t step, Scratch &s,
                uint64_t tempBase, cu::CUstream stream) {
  const Export &e = *k.exp;
  const Driver &d = *k.module->driver;
  const Device &dev = *k.module->device;
  const int64_t *symbols = s.bound.symbols.data();
  std::string where = "kernel \"" + l.kernel + "\" (step " + std::to_string(step) + ")";

  int64_t grid[3], block[3];
  bool empty = false;
  for (int i = 0; i < 3; ++i) {
    grid[i] = evaluate(l.grid[i], e, symbols, where + " grid");
    block[i] = evaluate(l.block[i], e, symbols, where + " block");
    if (grid[i] < 0 || grid[i] > dev.maxGrid[i])
      fail(grid[i] < 0 ? PK_ERROR_SHAPE : PK_ERROR_UNSUPPORTED,
           e.name + ": " + where + " has grid dimension " + std::to_string(i) + " = " +
               std::to_string(grid[i]) + "; " + dev.describe() + " allows 0 to " +
               std::to_string(dev.maxGrid[i]));
    if (block[i] < 1 || block[i] > 1024)
      fail(PK_ERROR_UNSUPPORTED, e.name + ": " + where + " has block dimension " +
                                     std::to_string(i) + " = " + std::to_string(block[i]) +
                                     "; expected 1 to 1024");
    if (grid[i] % l.cluster[i])
      fail(PK_ERROR_UNSUPPORTED, e.name + ": " + where + " has grid dimension " +
                                     std::to_string(i) + " = " + std::to_string(grid[i]) +
                                     ", not a multiple of its cluster dimension " +
                                     std::to_string(l.cluster[i]));
    empty |= grid[i] == 0;
  }
  int64_t threads = block[0] * block[1] * block[2];
  if (threads > f.maxThreadsPerBlock)
    fail(PK_ERROR_UNSUPPORTED, e.name + ": " + where + " has " + std::to_string(threads) +
                                   " threads per block; the compiled kernel allows at most " +
                                   std::to_string(f.maxThreadsPerBlock));
  int64_t shared = evaluate(l.dynamicSharedMemory, e, symbols, where + " dynamic shared memory");
  if (shared < 0 || shared > INT_MAX)
    fail(PK_ERROR_SHAPE, e.name + ": " + where + " needs " + std::to_string(shared) +
                             " bytes of dynamic shared memory");
  // An empty grid has no work: the sizes are zero. CUDA refuses such a
  // launch, so there is none.
  if (empty)
    return;
  optIn(k, f, shared, where);

  s.argValues.resize(l.args.size());
  s.argPointers.resize(l.args.size());
  s.tensorMaps.resize(l.tensorMaps.size());
  for (size_t i = 0; i < l.args.size(); ++i) {
    const KernelArg &a = l.args[i];
    switch (a.kind) {
    case KernelArg::Kind::TensorMap:
      encodeTensorMap(k, l.tensorMaps[a.index], s, tempBase,
                      where + " argument " + std::to_string(i), s.tensorMaps[a.index]);
      s.argPointers[i] = &s.tensorMaps[a.index];
      continue;
    case KernelArg::Kind::Param:
    case KernelArg::Kind::Temp: {
      BufferRef buffer{a.kind == KernelArg::Kind::Param ? BufferRef::Kind::Param : BufferRef::Kind::Temp,
                       a.index, a.offset};
      // A view starts inside its buffer: what lies past the end is not
      // the buffer's.
      if (a.offset && bufferBytes(buffer, s) == 0)
        fail(PK_ERROR_MANIFEST, e.name + ": " + where + " argument " + std::to_string(i) +
                                    " starts " + std::to_string(a.offset) + " bytes into " +
                                    bufferName(buffer, e) + ", past its end; the manifest is "
                                    "inconsistent");
      s.argValues[i] = bufferAddress(buffer, s, tempBase);
      break;
    }
    case KernelArg::Kind::Symbol:
      s.argValues[i] = uint64_t(symbols[a.index]);
      break;
    }
    s.argPointers[i] = &s.argValues[i];
  }
  void **params = s.argPointers.empty() ? nullptr : s.argPointers.data();
  if (l.cluster[0] * l.cluster[1] * l.cluster[2] == 1) {
    d.check(d.launchKernel(f.handle, unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]),
                           unsigned(block[0]), unsigned(block[1]), unsigned(block[2]),
                           unsigned(shared), stream, params, nullptr),
            "cuLaunchKernel of " + where);
    return;
  }
  cu::CUlaunchAttribute attribute = {};
  attribute.id = cu::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = l.cluster[0];
  attribute.value.clusterDim.y = l.cluster[1];
  attribute.value.clusterDim.z = l.cluster[2];
  cu::CUlaunchConfig config = {};
  config.gridDimX = unsigned(grid[0]);
  config.gridDimY = unsigned(grid[1]);
  config.gridDimZ = unsigned(grid[2]);
  config.blockDimX = unsigned(block[0]);
  config.blockDimY = unsigned(block[1]);
  config.blockDimZ = unsigned(block[2]);
  config.sharedMemBytes = unsigned(shared);
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  d.check(d.launchKernelEx(&config, f.handle, params, nullptr), "cuLaunchKernelEx of " + where);
}

} // namespace

void validateLaunch(const pk_kernel &k, const DLTensor *args, size_t numArgs) {
  validate(*k.exp, args, numArgs, k.module->ordinal, scratch.bound);
}

void launch(const pk_kernel &k, const DLTensor *args, size_t numArgs, cu::CUstream stream) {
  Scratch &s = scratch;
  const pk_module &m = *k.module;
  validate(*k.exp, args, numArgs, m.ordinal, s.bound);
  if (!m.driver)
    fail(PK_ERROR_NO_DEVICE, m.origin + ": the module was loaded with PK_LOAD_NO_DEVICE; it can "
                                        "validate arguments but not launch");
  const Program &p = *k.program; // pk_module_get only hands out kernels with a program
  const Export &e = *k.exp;

  // Temporaries: one allocation, each at an aligned offset.
  s.tempOffset.resize(p.temporaries.size());
  s.tempBytes.resize(p.temporaries.size());
  uint64_t total = 0;
  for (size_t t = 0; t < p.temporaries.size(); ++t) {
    const Temporary &temp = p.temporaries[t];
    uint64_t bytes = temp.dtype->bytes;
    for (size_t dim = 0; dim < temp.shape.size(); ++dim) {
      int64_t n = evaluate(temp.shape[dim], e, s.bound.symbols.data(),
                           "temporary " + std::to_string(t) + " dimension " + std::to_string(dim));
      if (n < 0 || __builtin_mul_overflow(bytes, uint64_t(n), &bytes))
        fail(PK_ERROR_SHAPE, e.name + ": temporary " + std::to_string(t) + " has size " +
                                 std::to_string(n) + " in dimension " + std::to_string(dim) +
                                 ", which is negative or too large");
    }
    total = (total + kTemporaryAlignment - 1) / kTemporaryAlignment * kTemporaryAlignment;
    s.tempOffset[t] = total;
    s.tempBytes[t] = bytes;
    if (__builtin_add_overflow(total, bytes, &total))
      fail(PK_ERROR_SHAPE, e.name + ": the temporaries are too large");
  }

  const Driver &d = *m.driver;
  ContextScope scope(d, m.device->context);
  Temporaries temporaries(d, *m.device, stream);
  temporaries.allocate(total);
  for (size_t step = 0; step < p.steps.size(); ++step) {
    if (const auto *c = std::get_if<CopyStep>(&p.steps[step]))
      copy(k, *c, step, s, temporaries.base(), stream);
    else
      launchStep(k, std::get<LaunchStep>(p.steps[step]), *k.functions[step], step, s,
                 temporaries.base(), stream);
  }
}

} // namespace pk::rt

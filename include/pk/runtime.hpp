//===- pk/runtime.hpp - C++ wrapper over the pkc runtime's C API -*- C++ -*-===//
//
// Header-only and thin: RAII owners for modules, device memory and streams,
// a non-owning Kernel, and a Tensor that keeps a DLTensor's shape alive.
// Everything goes through the C API, so C++ programs get the same stable
// ABI as C ones.
//
// Errors: every call has a noexcept try* form returning pk::Status. When
// exceptions are enabled (the default unless the compiler has them off, or
// PK_RUNTIME_EXCEPTIONS is defined to 0), the plain forms throw pk::Error.
//
//   pk::Module module = pk::Module::load("build/kernels/add.json");
//   pk::Kernel add = module.kernel("add");
//   add.launch({x.dl(), y.dl(), out.dl()}, stream);
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_HPP
#define PK_RUNTIME_HPP

#include "pk/runtime.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#ifndef PK_RUNTIME_EXCEPTIONS
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define PK_RUNTIME_EXCEPTIONS 1
#else
#define PK_RUNTIME_EXCEPTIONS 0
#endif
#endif

#if PK_RUNTIME_EXCEPTIONS
#include <stdexcept>
#endif

namespace pk {

/// How a call went: a pk_status and, on failure, pk_last_error()'s text.
class Status {
public:
  Status() = default;
  /// The status `code` of the call just made on this thread.
  static Status of(pk_status code) {
    Status s;
    s.code_ = code;
    if (code != PK_OK)
      s.message_ = pk_last_error();
    return s;
  }
  bool ok() const { return code_ == PK_OK; }
  explicit operator bool() const { return ok(); }
  pk_status code() const { return code_; }
  const std::string &message() const { return message_; }

private:
  pk_status code_ = PK_OK;
  std::string message_;
};

#if PK_RUNTIME_EXCEPTIONS
class Error : public std::runtime_error {
public:
  explicit Error(const Status &s) : std::runtime_error(s.message()), code_(s.code()) {}
  pk_status code() const { return code_; }

private:
  pk_status code_;
};

/// Throws pk::Error unless `s` is ok.
inline void check(const Status &s) {
  if (!s.ok())
    throw Error(s);
}
#endif

/// The DLPack type of a C++ element type.
template <typename T> DLDataType dtypeOf();
#define PK_RUNTIME_DTYPE(T, code, bits)                                                            \
  template <> inline DLDataType dtypeOf<T>() { return DLDataType{uint8_t(code), bits, 1}; }
PK_RUNTIME_DTYPE(bool, 6 /* kDLBool */, 8)
PK_RUNTIME_DTYPE(int8_t, kDLInt, 8)
PK_RUNTIME_DTYPE(int16_t, kDLInt, 16)
PK_RUNTIME_DTYPE(int32_t, kDLInt, 32)
PK_RUNTIME_DTYPE(int64_t, kDLInt, 64)
PK_RUNTIME_DTYPE(uint8_t, kDLUInt, 8)
PK_RUNTIME_DTYPE(uint16_t, kDLUInt, 16)
PK_RUNTIME_DTYPE(uint32_t, kDLUInt, 32)
PK_RUNTIME_DTYPE(uint64_t, kDLUInt, 64)
PK_RUNTIME_DTYPE(float, kDLFloat, 32)
PK_RUNTIME_DTYPE(double, kDLFloat, 64)
#undef PK_RUNTIME_DTYPE

/// A dense row-major array in device memory it does not own, as a
/// DLTensor whose shape it stores.
class Tensor {
public:
  Tensor(void *data, std::vector<int64_t> shape, DLDataType dtype, int device = 0)
      : shape_(std::move(shape)) {
    dl_.data = data;
    dl_.device = DLDevice{kDLCUDA, device};
    dl_.ndim = int32_t(shape_.size());
    dl_.dtype = dtype;
    dl_.shape = shape_.empty() ? nullptr : shape_.data();
    dl_.strides = nullptr; // dense row-major
    dl_.byte_offset = 0;
  }
  template <typename T> static Tensor of(T *data, std::vector<int64_t> shape, int device = 0) {
    return Tensor(data, std::move(shape), dtypeOf<T>(), device);
  }
  Tensor(const Tensor &other)
      : Tensor(other.dl_.data, other.shape_, other.dl_.dtype, other.dl_.device.device_id) {}
  Tensor &operator=(const Tensor &other) {
    shape_ = other.shape_;
    dl_ = other.dl_;
    dl_.shape = shape_.empty() ? nullptr : shape_.data();
    return *this;
  }

  const DLTensor &dl() const { return dl_; }
  const std::vector<int64_t> &shape() const { return shape_; }

private:
  std::vector<int64_t> shape_;
  DLTensor dl_{};
};

/// An export of a loaded module. It does not own anything and stays valid
/// while its Module lives.
class Kernel {
public:
  Kernel() = default;
  explicit Kernel(pk_kernel *kernel) : kernel_(kernel) {}

  pk_kernel *get() const { return kernel_; }
  const char *name() const { return pk_kernel_name(kernel_); }
  size_t numParams() const { return pk_kernel_num_params(kernel_); }
  std::vector<std::string> symbols() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < pk_kernel_num_symbols(kernel_); ++i)
      out.push_back(pk_kernel_symbol_name(kernel_, i));
    return out;
  }
  Status tryParam(size_t index, pk_param_info &info) const noexcept {
    return Status::of(pk_kernel_param(kernel_, index, &info));
  }
  /// The shape of param `index` for these symbol values (in symbols() order).
  Status tryParamShape(size_t index, const std::vector<int64_t> &symbolValues,
                       std::vector<int64_t> &shape) const {
    pk_param_info info{};
    Status s = tryParam(index, info);
    if (!s)
      return s;
    shape.assign(size_t(info.ndim), 0);
    return Status::of(pk_kernel_param_shape(kernel_, index, symbolValues.data(),
                                            symbolValues.size(), shape.data()));
  }

  Status tryValidate(const DLTensor *args, size_t count) const noexcept {
    return Status::of(pk_validate(kernel_, args, count));
  }
  Status tryValidate(std::initializer_list<DLTensor> args) const noexcept {
    return tryValidate(args.begin(), args.size());
  }
  Status tryLaunch(const DLTensor *args, size_t count, void *stream = nullptr) const noexcept {
    return Status::of(pk_launch(kernel_, args, count, stream));
  }
  Status tryLaunch(std::initializer_list<DLTensor> args, void *stream = nullptr) const noexcept {
    return tryLaunch(args.begin(), args.size(), stream);
  }
  Status tryLaunch(const std::vector<DLTensor> &args, void *stream = nullptr) const noexcept {
    return tryLaunch(args.data(), args.size(), stream);
  }

#if PK_RUNTIME_EXCEPTIONS
  pk_param_info param(size_t index) const {
    pk_param_info info{};
    check(tryParam(index, info));
    return info;
  }
  std::vector<int64_t> paramShape(size_t index, const std::vector<int64_t> &symbolValues) const {
    std::vector<int64_t> shape;
    check(tryParamShape(index, symbolValues, shape));
    return shape;
  }
  void validate(std::initializer_list<DLTensor> args) const { check(tryValidate(args)); }
  void launch(std::initializer_list<DLTensor> args, void *stream = nullptr) const {
    check(tryLaunch(args, stream));
  }
  void launch(const std::vector<DLTensor> &args, void *stream = nullptr) const {
    check(tryLaunch(args, stream));
  }
#endif

private:
  pk_kernel *kernel_ = nullptr;
};

/// Owns a pk_module.
class Module {
public:
  Module() = default;
  explicit Module(pk_module *adopt) : module_(adopt) {}
  Module(Module &&other) noexcept : module_(other.release()) {}
  Module &operator=(Module &&other) noexcept {
    if (this != &other)
      reset(other.release());
    return *this;
  }
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  ~Module() { reset(); }

  static Status tryLoad(const std::string &path, Module &out,
                        const pk_load_options *options = nullptr) noexcept {
    pk_module *m = nullptr;
    Status s = Status::of(pk_module_load_ex(path.c_str(), options, &m));
    out.reset(m);
    return s;
  }
  static Status tryLoadMemory(const void *json, size_t size, const pk_load_options *options,
                              Module &out) noexcept {
    pk_module *m = nullptr;
    Status s = Status::of(pk_module_load_memory(json, size, options, &m));
    out.reset(m);
    return s;
  }
  Status tryKernel(const std::string &name, Kernel &out) const noexcept {
    pk_kernel *k = nullptr;
    Status s = Status::of(pk_module_get(module_, name.c_str(), &k));
    out = Kernel(k);
    return s;
  }

#if PK_RUNTIME_EXCEPTIONS
  static Module load(const std::string &path, const pk_load_options *options = nullptr) {
    Module m;
    check(tryLoad(path, m, options));
    return m;
  }
  static Module loadMemory(const void *json, size_t size,
                           const pk_load_options *options = nullptr) {
    Module m;
    check(tryLoadMemory(json, size, options, m));
    return m;
  }
  Kernel kernel(const std::string &name) const {
    Kernel k;
    check(tryKernel(name, k));
    return k;
  }
#endif

  std::vector<std::string> exports() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < pk_module_num_exports(module_); ++i)
      out.push_back(pk_module_export_name(module_, i));
    return out;
  }
  std::string target() const { return pk_module_target(module_); }
  std::string artifact() const { return pk_module_artifact(module_); }
  int device() const { return pk_module_device(module_); }
  pk_module *get() const { return module_; }
  pk_module *release() { return std::exchange(module_, nullptr); }
  void reset(pk_module *m = nullptr) {
    if (module_)
      pk_module_destroy(module_);
    module_ = m;
  }

private:
  pk_module *module_ = nullptr;
};

/// Owns device memory from pk_device_alloc.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : device_(other.device_), data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { reset(); }

  static Status tryAllocate(int device, size_t bytes, DeviceBuffer &out) noexcept {
    out.reset();
    Status s = Status::of(pk_device_alloc(device, bytes, &out.data_));
    if (s) {
      out.device_ = device;
      out.bytes_ = bytes;
    }
    return s;
  }
  Status tryUpload(const void *host, size_t bytes) noexcept {
    return Status::of(pk_memcpy_to_device(device_, data_, host, bytes));
  }
  Status tryDownload(void *host, size_t bytes) const noexcept {
    return Status::of(pk_memcpy_to_host(device_, host, data_, bytes));
  }

#if PK_RUNTIME_EXCEPTIONS
  static DeviceBuffer allocate(int device, size_t bytes) {
    DeviceBuffer b;
    check(tryAllocate(device, bytes, b));
    return b;
  }
  /// Allocates room for `host` and copies it there.
  template <typename T> static DeviceBuffer from(int device, const std::vector<T> &host) {
    DeviceBuffer b = allocate(device, host.size() * sizeof(T));
    check(b.tryUpload(host.data(), host.size() * sizeof(T)));
    return b;
  }
  template <typename T> std::vector<T> download() const {
    std::vector<T> host(bytes_ / sizeof(T));
    check(tryDownload(host.data(), host.size() * sizeof(T)));
    return host;
  }
#endif

  void *data() const { return data_; }
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  void reset() {
    if (data_)
      pk_device_free(device_, data_);
    data_ = nullptr;
    bytes_ = 0;
  }

private:
  int device_ = 0;
  void *data_ = nullptr;
  size_t bytes_ = 0;
};

/// Owns a stream from pk_stream_create.
class Stream {
public:
  Stream() = default;
  Stream(Stream &&other) noexcept
      : device_(other.device_), stream_(std::exchange(other.stream_, nullptr)) {}
  Stream &operator=(Stream &&other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  ~Stream() { reset(); }

  static Status tryCreate(int device, Stream &out) noexcept {
    out.reset();
    out.device_ = device;
    return Status::of(pk_stream_create(device, &out.stream_));
  }
  Status trySynchronize() const noexcept {
    return Status::of(pk_stream_synchronize(device_, stream_));
  }
#if PK_RUNTIME_EXCEPTIONS
  static Stream create(int device) {
    Stream s;
    check(tryCreate(device, s));
    return s;
  }
  void synchronize() const { check(trySynchronize()); }
#endif

  void *get() const { return stream_; }
  void reset() {
    if (stream_)
      pk_stream_destroy(device_, stream_);
    stream_ = nullptr;
  }

private:
  int device_ = 0;
  void *stream_ = nullptr;
};

} // namespace pk

#endif // PK_RUNTIME_HPP

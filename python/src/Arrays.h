//===- Arrays.h - Python arrays as DLTensors for one launch -----*- C++ -*-===//
//
// A launch needs a DLTensor per param. Any array that speaks DLPack
// (`__dlpack__` / `__dlpack_device__`: PyTorch, CuPy, JAX, ...) is taken
// through its capsule, which the extension consumes and releases after the
// launch. PyTorch tensors and CuPy arrays may instead be read through
// their attributes (torch: data_ptr, shape, stride, dtype, device; CuPy:
// data.ptr, shape, strides, dtype, device): `__dlpack__` costs about 2.7
// microseconds per array (measured on an H100 machine), several times a
// launch.
//
// Nothing is copied: the DLTensor points at the array's memory, which
// stays the caller's. The runtime checks everything about it (device,
// dtype, rank, shape, strides, alignment, aliasing) before a launch.
//
//===----------------------------------------------------------------------===//
#ifndef PKC_PYTHON_ARRAYS_H
#define PKC_PYTHON_ARRAYS_H

#include <dlpack/dlpack.h>
#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pkc {

/// How to read an array: through DLPack, or a torch.Tensor's or a
/// cupy.ndarray's attributes.
enum class ImportKind { DLPack, Torch, Cupy };

/// A DLTensor viewing a Python array, valid while this object lives.
class ImportedArray {
public:
  ImportedArray() = default;
  ImportedArray(const ImportedArray &) = delete;
  ImportedArray &operator=(const ImportedArray &) = delete;
  ImportedArray(ImportedArray &&other) noexcept;
  ~ImportedArray();

  /// Reads `array` as `kind`. For CUDA arrays taken through DLPack,
  /// `stream` is the stream the launch will use (0: the legacy default
  /// stream), which the producer orders its pending work before, as the
  /// DLPack protocol has it. `what` names the argument in messages.
  void import(nanobind::handle array, ImportKind kind, uintptr_t stream, const std::string &what);

  /// Views `tensor`, a dense row-major array just allocated with this
  /// dtype, shape and device: only its address is read (data_ptr()).
  void adopt(nanobind::handle tensor, DLDataType dtype, std::vector<int64_t> shape, DLDevice device);
  /// Whether import or adopt has run.
  bool imported() const { return tensor_.ndim > 0 || tensor_.data != nullptr; }
  const DLTensor &tensor() const { return tensor_; }

private:
  void importDLPack(nanobind::handle array, uintptr_t stream, const std::string &what);
  void importTorch(nanobind::handle array, const std::string &what);
  void importCupy(nanobind::handle array, const std::string &what);

  DLTensor tensor_{};
  DLManagedTensor *managed_ = nullptr; ///< released (its deleter called) with this
  std::vector<int64_t> dims_;          ///< torch, CuPy: shape, then strides
};

/// Turns on the torch import for instances of `tensorType` (torch.Tensor)
/// and tells it which torch.dtype is which DLPack type ({torch.float32:
/// "float32", ...}). pkc's Python side calls this when it meets torch; the
/// extension never imports torch itself.
void enableTorch(nanobind::handle tensorType, nanobind::dict dtypes);
/// A call's torch shortcuts: what pkc's Python side launches torch
/// tensors with (its torch framework object), and that framework's raw
/// stream query (device index -> CUstream). With them a call allocates
/// outputs (Tensor.new_empty) and asks for the stream without going
/// through the framework's Python methods. An output with the first
/// input's shape and dtype, when that input is dense and row-major, is
/// torch.empty_like(input): a microsecond less than new_empty (measured on
/// an H200 machine), whose arguments torch parses. Unset until enabled.
struct TorchShortcuts {
  nanobind::object framework, rawStream, emptyLike;
};
const TorchShortcuts *torchShortcuts();
void enableTorchShortcuts(nanobind::handle framework, nanobind::handle rawStream,
                          nanobind::handle emptyLike);
/// The same for CuPy: what pkc's Python side launches CuPy arrays with
/// (its cupy framework object), cupy.cuda.runtime.getDevice,
/// cupy.cuda.get_current_stream and the cupy.ndarray type. A call on
/// arrays of the current device takes that device's current stream and
/// makes outputs of the first input's dtype as cupy.ndarray(shape,
/// input.dtype), without the framework's Python methods (cupy.empty_like
/// is Python code slower than the framework's cupy.empty); other calls go
/// through them. Unset until enabled.
struct CupyShortcuts {
  nanobind::object framework, currentDevice, currentStream, ndarray;
};
const CupyShortcuts *cupyShortcuts();
void enableCupyShortcuts(nanobind::handle framework, nanobind::handle currentDevice,
                         nanobind::handle currentStream, nanobind::handle ndarray);
/// The torch.dtype of a DLPack type, or an invalid handle.
nanobind::handle torchDtypeOf(DLDataType dtype);
/// The same for CuPy: instances of `arrayType` (cupy.ndarray), whose
/// dtypes are NumPy's (read by their names).
void enableCupy(nanobind::handle arrayType);

/// How `array` is best read: Torch / Cupy for their arrays once enabled,
/// else DLPack.
ImportKind importKindOf(nanobind::handle array);

/// The attribute and method names the launch path reads, interned once.
/// A lookup by an interned str neither builds nor hashes a new string, and
/// a method called by name makes no bound method: tens of nanoseconds each,
/// and a torch launch reads about fifteen.
struct AttrNames {
  nanobind::object dtype, shape, stride, strides, dataPtr, getDevice, newEmpty, data, ptr, device,
      id, name;
};
const AttrNames &attrNames();
/// A new reference a CPython call returned, owned; or, when it returned
/// null, what Python raised, thrown.
nanobind::object stolen(PyObject *result);
/// `o.<name>`, and `o.<name>()`; both raise what Python raised.
nanobind::object getAttr(nanobind::handle o, const nanobind::object &name);
nanobind::object callMethod(nanobind::handle o, const nanobind::object &name);
/// `like.new_empty(shape, dtype=dtype)`.
nanobind::object newEmpty(nanobind::handle like, nanobind::handle shape, nanobind::handle dtype);

/// The DLPack type of a NumPy dtype name ("float32", "bfloat16", "bool"),
/// and back. Throws ArgumentError for names the runtime does not know.
DLDataType dtypeFromName(const std::string &name);
std::string dtypeName(DLDataType dtype);

} // namespace pkc

#endif // PKC_PYTHON_ARRAYS_H

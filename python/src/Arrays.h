//===- Arrays.h - Python arrays as DLTensors for one launch -----*- C++ -*-===//
//
// A launch needs a DLTensor per param. Any array that speaks DLPack
// (`__dlpack__` / `__dlpack_device__`: PyTorch, CuPy, JAX, ...) is taken
// through its capsule, which the extension consumes and releases after the
// launch. PyTorch tensors may instead be read through their attributes
// (data_ptr, shape, stride, dtype, device): torch's `__dlpack__` is Python
// code that costs microseconds per tensor, several times a launch.
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

/// How to read an array: through DLPack, or a torch.Tensor's attributes.
enum class ImportKind { DLPack, Torch };

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

  const DLTensor &tensor() const { return tensor_; }

private:
  void importDLPack(nanobind::handle array, uintptr_t stream, const std::string &what);
  void importTorch(nanobind::handle array, const std::string &what);

  DLTensor tensor_{};
  DLManagedTensor *managed_ = nullptr; ///< released (its deleter called) with this
  std::vector<int64_t> dims_;          ///< torch: shape, then strides
};

/// Turns on the torch import for instances of `tensorType` (torch.Tensor)
/// and tells it which torch.dtype is which DLPack type ({torch.float32:
/// "float32", ...}). pkc's Python side calls this when it meets torch; the
/// extension never imports torch itself.
void enableTorch(nanobind::handle tensorType, nanobind::dict dtypes);

/// How `array` is best read: Torch for torch tensors once enabled, else
/// DLPack.
ImportKind importKindOf(nanobind::handle array);

/// The DLPack type of a NumPy dtype name ("float32", "bfloat16", "bool"),
/// and back. Throws ArgumentError for names the runtime does not know.
DLDataType dtypeFromName(const std::string &name);
std::string dtypeName(DLDataType dtype);

} // namespace pkc

#endif // PKC_PYTHON_ARRAYS_H

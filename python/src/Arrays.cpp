//===- Arrays.cpp - Python arrays as DLTensors for one launch -------------===//
#include "Arrays.h"

#include "Errors.h"

#include <nanobind/stl/string.h>

#include "runtime/DType.h"

#include <utility>

namespace nb = nanobind;

namespace pkc {

using pk::rt::operator==;

namespace {

/// Framework dtype objects with their DLPack types.
using DTypeTable = std::vector<std::pair<nb::object, DLDataType>>;

/// torch.dtype objects and their DLPack types (set by enableTorch). Never
/// freed: the objects must outlive every launch, up to interpreter exit.
DTypeTable &torchDTypes() {
  static auto *table = new DTypeTable;
  return *table;
}
PyTypeObject *torchTensorType = nullptr;
PyTypeObject *cupyArrayType = nullptr;
/// NumPy dtype objects CuPy arrays had, with their DLPack types: NumPy's
/// built-in dtypes are singletons, so a lookup is by identity.
DTypeTable &cupyDTypes() {
  static auto *table = new DTypeTable;
  return *table;
}

/// The DLPack type `table` gives the dtype object `dtype` (by identity),
/// or null.
const DLDataType *dtypeIn(const DTypeTable &table, nb::handle dtype) {
  for (const auto &[object, dl] : table)
    if (object.is(dtype))
      return &dl;
  return nullptr;
}

std::string typeName(nb::handle o) { return nb::cast<std::string>(nb::type_name(o.type())); }

[[noreturn]] void invalid(const std::string &what, const std::string &problem) {
  raise(PK_ERROR_INVALID_ARGUMENT, what + " " + problem);
}

/// Reads a tuple-like of ints (torch.Size, a tuple) into `out`.
void readInts(nb::handle sequence, std::vector<int64_t> &out) {
  PyObject *seq = sequence.ptr();
  if (!PyTuple_Check(seq))
    throw nb::type_error("expected a tuple");
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, i));
    if (v == -1 && PyErr_Occurred())
      throw nb::python_error();
    out.push_back(int64_t(v));
  }
}

} // namespace

ImportedArray::ImportedArray(ImportedArray &&other) noexcept
    : tensor_(other.tensor_), managed_(std::exchange(other.managed_, nullptr)),
      dims_(std::move(other.dims_)) {
  if (!dims_.empty()) {
    tensor_.shape = dims_.data();
    tensor_.strides = dims_.data() + tensor_.ndim;
  }
}

ImportedArray::~ImportedArray() {
  if (managed_ && managed_->deleter)
    managed_->deleter(managed_);
}

void ImportedArray::import(nb::handle array, ImportKind kind, uintptr_t stream,
                           const std::string &what) {
  if (kind == ImportKind::Torch)
    importTorch(array, what);
  else if (kind == ImportKind::Cupy)
    importCupy(array, what);
  else
    importDLPack(array, stream, what);
}

void ImportedArray::importDLPack(nb::handle array, uintptr_t stream, const std::string &what) {
  if (!nb::hasattr(array, "__dlpack__") || !nb::hasattr(array, "__dlpack_device__"))
    invalid(what, "is a " + typeName(array) +
                      ", which does not speak DLPack (__dlpack__, __dlpack_device__); pass a "
                      "CUDA array (PyTorch, CuPy, JAX, ...)");
  nb::tuple device = nb::cast<nb::tuple>(array.attr("__dlpack_device__")());
  int deviceType = nb::cast<int>(device[0]);
  nb::object capsule;
  if (deviceType == kDLCUDA || deviceType == kDLCUDAManaged) {
    // DLPack's stream numbering: 1 is the legacy default stream (0 is
    // ambiguous and not allowed), any other value a CUstream.
    capsule = array.attr("__dlpack__")(nb::arg("stream") = stream ? stream : uintptr_t(1));
  } else {
    capsule = array.attr("__dlpack__")();
  }
  auto *managed = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed) {
    PyErr_Clear();
    invalid(what, "gave a DLPack capsule that is not an unused \"dltensor\" (a " + typeName(array) +
                      " whose __dlpack__ does not follow the protocol)");
  }
  // The capsule is ours now: renaming it tells its destructor not to
  // release the tensor, which we do after the launch.
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0)
    throw nb::python_error();
  managed_ = managed;
  tensor_ = managed->dl_tensor;
}

void ImportedArray::importTorch(nb::handle t, const std::string &what) {
  const AttrNames &names = attrNames();
  nb::object dtype = getAttr(t, names.dtype);
  const DLDataType *known = dtypeIn(torchDTypes(), dtype);
  if (!known)
    invalid(what, "is a torch tensor of dtype " + nb::cast<std::string>(nb::str(dtype)) +
                      ", which pkc kernels do not take");
  tensor_.dtype = *known;
  dims_.clear();
  readInts(getAttr(t, names.shape), dims_);
  size_t rank = dims_.size();
  readInts(callMethod(t, names.stride), dims_);
  tensor_.ndim = int32_t(rank);
  tensor_.shape = dims_.data();
  tensor_.strides = dims_.data() + rank;
  tensor_.data = reinterpret_cast<void *>(nb::cast<uintptr_t>(callMethod(t, names.dataPtr)));
  tensor_.byte_offset = 0; // data_ptr() includes the storage offset
  int index = nb::cast<int>(callMethod(t, names.getDevice));
  if (index < 0)
    tensor_.device = {kDLCPU, 0};
  else
    tensor_.device = {kDLCUDA, index};
}

void ImportedArray::adopt(nb::handle t, DLDataType dtype, std::vector<int64_t> shape, DLDevice device) {
  size_t rank = shape.size();
  dims_ = std::move(shape);
  dims_.resize(2 * rank);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    dims_[rank + d] = stride;
    stride *= dims_[d];
  }
  tensor_.dtype = dtype;
  tensor_.ndim = int32_t(rank);
  tensor_.shape = dims_.data();
  tensor_.strides = dims_.data() + rank;
  tensor_.data = reinterpret_cast<void *>(nb::cast<uintptr_t>(callMethod(t, attrNames().dataPtr)));
  tensor_.byte_offset = 0;
  tensor_.device = device;
}

void ImportedArray::importCupy(nb::handle a, const std::string &what) {
  const AttrNames &names = attrNames();
  nb::object dtype = getAttr(a, names.dtype);
  if (const DLDataType *known = dtypeIn(cupyDTypes(), dtype)) {
    tensor_.dtype = *known;
  } else {
    std::string name = nb::cast<std::string>(nb::str(getAttr(dtype, names.name)));
    if (!pk::rt::dtypeByName(name))
      invalid(what, "is a CuPy array of dtype " + name + ", which pkc kernels do not take");
    tensor_.dtype = dtypeFromName(name);
    cupyDTypes().emplace_back(dtype, tensor_.dtype);
  }
  dims_.clear();
  readInts(getAttr(a, names.shape), dims_);
  size_t rank = dims_.size();
  readInts(getAttr(a, names.strides), dims_);
  // CuPy's strides are in bytes; DLPack's in elements.
  int64_t bytes = (int64_t(tensor_.dtype.bits) * tensor_.dtype.lanes + 7) / 8;
  for (size_t d = rank; d < dims_.size(); ++d) {
    if (bytes == 0 || dims_[d] % bytes != 0)
      invalid(what, "is a CuPy array whose strides are not whole elements");
    dims_[d] /= bytes;
  }
  tensor_.ndim = int32_t(rank);
  tensor_.shape = dims_.data();
  tensor_.strides = dims_.data() + rank;
  tensor_.data =
      reinterpret_cast<void *>(nb::cast<uintptr_t>(getAttr(getAttr(a, names.data), names.ptr)));
  tensor_.byte_offset = 0; // data.ptr is the first element's address
  tensor_.device = {kDLCUDA, nb::cast<int>(getAttr(getAttr(a, names.device), names.id))};
}

namespace {
nb::object interned(const char *name) {
  PyObject *s = PyUnicode_InternFromString(name);
  if (!s)
    throw nb::python_error();
  return nb::steal(s);
}
} // namespace

const AttrNames &attrNames() {
  // Never freed, as the dtypes: launches may run up to interpreter exit.
  static const AttrNames *names = new AttrNames{
      interned("dtype"),    interned("shape"),      interned("stride"),    interned("strides"),
      interned("data_ptr"), interned("get_device"), interned("new_empty"), interned("data"),
      interned("ptr"),      interned("device"),     interned("id"),        interned("name")};
  return *names;
}

nb::object stolen(PyObject *result) {
  if (!result)
    throw nb::python_error();
  return nb::steal(result);
}

nb::object getAttr(nb::handle o, const nb::object &name) {
  return stolen(PyObject_GetAttr(o.ptr(), name.ptr()));
}

nb::object callMethod(nb::handle o, const nb::object &name) {
  return stolen(PyObject_CallMethodNoArgs(o.ptr(), name.ptr()));
}

nb::object newEmpty(nb::handle like, nb::handle shape, nb::handle dtype) {
  static PyObject *kwnames = nb::make_tuple(interned("dtype")).release().ptr();
  PyObject *args[] = {like.ptr(), shape.ptr(), dtype.ptr()};
  return stolen(PyObject_VectorcallMethod(attrNames().newEmpty.ptr(), args, 2, kwnames));
}

namespace {
TorchShortcuts &shortcutStorage() {
  static auto *storage = new TorchShortcuts; // never freed, as the dtypes
  return *storage;
}
} // namespace

const TorchShortcuts *torchShortcuts() {
  const TorchShortcuts &s = shortcutStorage();
  return s.framework.is_valid() ? &s : nullptr;
}

void enableTorchShortcuts(nb::handle framework, nb::handle rawStream, nb::handle emptyLike) {
  shortcutStorage().rawStream = nb::borrow(rawStream);
  shortcutStorage().emptyLike = nb::borrow(emptyLike);
  shortcutStorage().framework = nb::borrow(framework);
}

nb::handle torchDtypeOf(DLDataType dtype) {
  for (const auto &[object, dl] : torchDTypes())
    if (dl == dtype)
      return object;
  return nb::handle();
}

namespace {
CupyShortcuts &cupyShortcutStorage() {
  static auto *storage = new CupyShortcuts; // never freed, as torch's
  return *storage;
}
} // namespace

const CupyShortcuts *cupyShortcuts() {
  const CupyShortcuts &s = cupyShortcutStorage();
  return s.framework.is_valid() ? &s : nullptr;
}

void enableCupyShortcuts(nb::handle framework, nb::handle currentDevice, nb::handle currentStream,
                         nb::handle ndarray) {
  CupyShortcuts &s = cupyShortcutStorage();
  s.currentDevice = nb::borrow(currentDevice);
  s.currentStream = nb::borrow(currentStream);
  s.ndarray = nb::borrow(ndarray);
  s.framework = nb::borrow(framework);
}

void enableCupy(nb::handle arrayType) {
  if (!PyType_Check(arrayType.ptr()))
    throw nb::type_error("enable_cupy: expected the cupy.ndarray type");
  Py_INCREF(arrayType.ptr());
  cupyArrayType = reinterpret_cast<PyTypeObject *>(arrayType.ptr());
}

void enableTorch(nb::handle tensorType, nb::dict table) {
  if (!PyType_Check(tensorType.ptr()))
    throw nb::type_error("enable_torch: expected the torch.Tensor type");
  auto &dtypes = torchDTypes();
  dtypes.clear();
  for (auto [object, name] : table)
    dtypes.emplace_back(nb::borrow(object), dtypeFromName(nb::cast<std::string>(name)));
  Py_INCREF(tensorType.ptr());
  torchTensorType = reinterpret_cast<PyTypeObject *>(tensorType.ptr());
}

ImportKind importKindOf(nb::handle array) {
  if (torchTensorType && PyObject_TypeCheck(array.ptr(), torchTensorType))
    return ImportKind::Torch;
  if (cupyArrayType && PyObject_TypeCheck(array.ptr(), cupyArrayType))
    return ImportKind::Cupy;
  return ImportKind::DLPack;
}

DLDataType dtypeFromName(const std::string &name) {
  const pk::rt::DTypeDesc *d = pk::rt::dtypeByName(name);
  if (!d)
    raise(PK_ERROR_INVALID_ARGUMENT,
          "unknown dtype \"" + name + "\"; expected one of " + pk::rt::dtypeNames());
  return d->dl;
}

std::string dtypeName(DLDataType dtype) { return pk::rt::describe(dtype); }

} // namespace pkc

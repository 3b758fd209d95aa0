//===- Modules.cpp - Loaded modules and their kernels ---------------------===//
#include "Modules.h"

#include "Arrays.h"
#include "Errors.h"

#include <nanobind/stl/string.h>

#include "runtime/DType.h"

#include <utility>

namespace nb = nanobind;

namespace pkc {
namespace {

using pk::rt::operator==;

/// Whether `t` is a dense row-major array of this dtype and shape: then
/// torch.empty_like(t) makes the output (it keeps a dense tensor's
/// strides, here row-major ones).
bool isRowMajorLike(const DLTensor &t, DLDataType dtype, const std::vector<int64_t> &shape) {
  if (!(t.dtype == dtype) || size_t(t.ndim) != shape.size() || t.byte_offset != 0)
    return false;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (t.shape[d] != shape[d] || (t.strides && t.strides[d] != stride))
      return false;
    stride *= shape[d];
  }
  return true;
}

} // namespace

pk_status ModuleSource::tryLoad(int device, pk_module **module) const {
  pk_load_options options;
  pk_load_options_init(&options);
  options.device = device;
  options.flags = flags;
  options.compute_capability = computeCapability;
  std::vector<pk_artifact_data> artifacts;
  for (const auto &[file, bytes] : blobs)
    artifacts.push_back({file.c_str(), bytes.data(), bytes.size()});
  options.artifacts = artifacts.data();
  options.num_artifacts = artifacts.size();
  return path.empty() ? pk_module_load_memory(manifest.data(), manifest.size(), &options, module)
                      : pk_module_load_ex(path.c_str(), &options, module);
}

pk_module *ModuleSource::load(int device) const {
  pk_module *module = nullptr;
  pk_status status;
  {
    // Loading reads files, hashes them and talks to the driver.
    nb::gil_scoped_release release;
    status = tryLoad(device, &module);
  }
  check(status);
  return module;
}

Kernel::Kernel(std::shared_ptr<ModuleHandle> module, pk_kernel *kernel)
    : module_(std::move(module)), kernel_(kernel), name_(pk_kernel_name(kernel)) {
  size_t n = pk_kernel_num_params(kernel);
  for (size_t i = 0; i < n; ++i) {
    pk_param_info info;
    pkc::check(pk_kernel_param(kernel, i, &info));
    ParamInfo p;
    p.name = info.name;
    p.output = info.role == PK_PARAM_OUTPUT;
    p.dtype = info.dtype;
    p.dtypeName = dtypeName(info.dtype);
    p.ndim = info.ndim;
    p.alignment = info.alignment;
    numInputs_ += !p.output;
    params_.push_back(std::move(p));
  }
  size_t numSymbols = pk_kernel_num_symbols(kernel);
  for (size_t i = 0; i < numSymbols; ++i) {
    SymbolInfo s;
    s.name = pk_kernel_symbol_name(kernel, i);
    int32_t dim = 0;
    pkc::check(pk_kernel_symbol_source(kernel, i, &s.param, &dim));
    s.dim = dim;
    symbols_.push_back(std::move(s));
  }
}

std::string Kernel::label(size_t param) const {
  return name_ + ": " + (params_[param].output ? "output" : "argument") + " \"" +
         params_[param].name + "\" (param " + std::to_string(param) + ")";
}

std::vector<int64_t> Kernel::symbolValues(const std::vector<const DLTensor *> &inputs) const {
  std::vector<int64_t> values;
  for (const SymbolInfo &s : symbols_) {
    if (s.param >= numInputs_)
      raise(PK_ERROR_INVALID_ARGUMENT,
            name_ + ": the size " + s.name + " is read from output \"" + params_[s.param].name +
                "\", so the outputs cannot be allocated for you; pass them with out=");
    const DLTensor &t = *inputs[s.param];
    // A rank mismatch is the runtime's to report, with its message; a
    // placeholder value lets the launch get there.
    values.push_back(s.dim < t.ndim ? std::max<int64_t>(t.shape[s.dim], 0) : 0);
  }
  return values;
}

std::vector<std::vector<int64_t>>
Kernel::outputShapes(const std::vector<std::vector<int64_t>> &inputShapes) const {
  if (inputShapes.size() != numInputs_)
    raise(PK_ERROR_ARGUMENT_COUNT, name_ + " takes " + std::to_string(numInputs_) +
                                       " input(s), got " + std::to_string(inputShapes.size()));
  std::vector<DLTensor> tensors(numInputs_);
  std::vector<const DLTensor *> pointers;
  for (size_t i = 0; i < numInputs_; ++i) {
    tensors[i].ndim = int32_t(inputShapes[i].size());
    tensors[i].shape = const_cast<int64_t *>(inputShapes[i].data());
    pointers.push_back(&tensors[i]);
  }
  std::vector<int64_t> values = symbolValues(pointers);
  std::vector<std::vector<int64_t>> shapes;
  for (size_t p = numInputs_; p < params_.size(); ++p) {
    std::vector<int64_t> shape(size_t(params_[p].ndim));
    pkc::check(pk_kernel_param_shape(kernel_, p, values.data(), values.size(), shape.data()));
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

std::vector<std::vector<int64_t>> Kernel::check(const std::vector<std::vector<int64_t>> &shapes,
                                                const std::vector<std::string> &dtypes) const {
  if (shapes.size() != dtypes.size())
    throw nb::value_error("check: give one dtype per shape");
  std::vector<std::vector<int64_t>> outputs = outputShapes(shapes);
  // Arrays 1 TiB apart: aligned for any kernel, and far enough apart that
  // only a real aliasing problem could make them overlap.
  int device = pk_module_device(module_->module);
  std::vector<DLTensor> args(params_.size());
  for (size_t p = 0; p < params_.size(); ++p) {
    DLTensor &t = args[p];
    const std::vector<int64_t> &shape = p < numInputs_ ? shapes[p] : outputs[p - numInputs_];
    t.data = reinterpret_cast<void *>((uint64_t(p) + 1) << 40);
    t.device = {kDLCUDA, device < 0 ? 0 : device};
    t.ndim = int32_t(shape.size());
    t.dtype = p < numInputs_ ? dtypeFromName(dtypes[p]) : params_[p].dtype;
    t.shape = const_cast<int64_t *>(shape.data());
  }
  pkc::check(pk_validate(kernel_, args.data(), args.size()));
  return outputs;
}

void Kernel::launch(nb::sequence arrays, uintptr_t stream) const {
  size_t n = nb::len(arrays);
  std::vector<ImportedArray> imported(n);
  std::vector<DLTensor> tensors(n);
  for (size_t i = 0; i < n; ++i) {
    nb::handle a = arrays[i];
    imported[i].import(a, importKindOf(a), stream, i < params_.size() ? label(i) : name_);
    tensors[i] = imported[i].tensor();
  }
  pk_status status;
  {
    nb::gil_scoped_release release;
    status = pk_launch(kernel_, tensors.data(), n, reinterpret_cast<void *>(stream));
  }
  pkc::check(status);
}

nb::object Kernel::call(nb::tuple inputs, nb::handle out, nb::handle framework,
                        nb::handle stream) const {
  size_t numGiven = nb::len(inputs);
  if (numGiven != numInputs_) {
    std::string names;
    for (size_t i = 0; i < numInputs_; ++i)
      names += (i ? ", " : "") + params_[i].name;
    raise(PK_ERROR_ARGUMENT_COUNT, name_ + " takes " + std::to_string(numInputs_) + " array(s) (" +
                                       names + "), got " + std::to_string(numGiven));
  }
  // The outputs given: one array, or a sequence of them.
  std::vector<nb::object> outputs;
  bool single = numOutputs() == 1;
  if (!out.is_none()) {
    if (PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) {
      for (nb::handle o : nb::borrow<nb::sequence>(out))
        outputs.push_back(nb::borrow(o));
      single = false;
    } else {
      outputs.push_back(nb::borrow(out));
    }
    if (outputs.size() != numOutputs())
      raise(PK_ERROR_ARGUMENT_COUNT, name_ + " has " + std::to_string(numOutputs()) +
                                         " output(s), but out= gives " +
                                         std::to_string(outputs.size()));
  }
  nb::handle like = numInputs_ ? inputs[0] : (outputs.empty() ? nb::handle() : outputs[0]);
  // torch tensors skip the framework's Python methods (a microsecond of a
  // call that costs ~13 on an H100 machine): the same calls, made here.
  const TorchShortcuts *torch = torchShortcuts();
  bool torchCall = torch && framework.is(torch->framework) && like.is_valid() &&
                   importKindOf(like) == ImportKind::Torch;
  // CuPy arrays on the current device likewise (others go through the
  // framework, which switches devices); asked only when the call needs a
  // stream or outputs.
  const CupyShortcuts *cupy = cupyShortcuts();
  bool cupyCall = cupy && (stream.is_none() || outputs.empty()) && framework.is(cupy->framework) &&
                  like.is_valid() && importKindOf(like) == ImportKind::Cupy &&
                  nb::cast<int>(getAttr(getAttr(like, attrNames().device), attrNames().id)) ==
                      nb::cast<int>(cupy->currentDevice());
  uintptr_t s = 0;
  if (!stream.is_none()) {
    s = nb::cast<uintptr_t>(stream);
  } else if (torchCall) {
    int device = nb::cast<int>(callMethod(like, attrNames().getDevice));
    s = device >= 0 ? nb::cast<uintptr_t>(torch->rawStream(device)) : 0;
  } else if (cupyCall) {
    s = nb::cast<uintptr_t>(getAttr(cupy->currentStream(), attrNames().ptr));
  } else if (!framework.is_none()) {
    s = nb::cast<uintptr_t>(framework.attr("stream")(like));
  }

  std::vector<ImportedArray> imported(params_.size());
  std::vector<DLTensor> tensors(params_.size());
  std::vector<const DLTensor *> inputTensors;
  for (size_t i = 0; i < numInputs_; ++i) {
    nb::handle a = inputs[i];
    imported[i].import(a, importKindOf(a), s, label(i));
    tensors[i] = imported[i].tensor();
    inputTensors.push_back(&tensors[i]);
  }
  if (outputs.empty()) {
    if (framework.is_none())
      raise(PK_ERROR_INVALID_ARGUMENT,
            name_ + ": pkc does not know how to allocate outputs like " +
                (like.is_valid() ? "a " + nb::cast<std::string>(nb::type_name(like.type()))
                                 : std::string("these (there are no inputs)")) +
                "; pass them with out=, or register the array type with "
                "pkc.register_framework");
    std::vector<int64_t> values = symbolValues(inputTensors);
    for (size_t p = numInputs_; p < params_.size(); ++p) {
      std::vector<int64_t> shape(size_t(params_[p].ndim));
      pkc::check(pk_kernel_param_shape(kernel_, p, values.data(), values.size(), shape.data()));
      auto shapeTuple = [&] {
        nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(Py_ssize_t(shape.size())));
        for (size_t d = 0; d < shape.size(); ++d)
          PyTuple_SET_ITEM(t.ptr(), Py_ssize_t(d), PyLong_FromLongLong(shape[d]));
        return t;
      };
      nb::handle dtype = torchCall ? torchDtypeOf(params_[p].dtype) : nb::handle();
      if (dtype.is_valid()) {
        // A dense tensor like the first input, whose shape and dtype are
        // known here: only its address is asked for.
        if (numInputs_ && isRowMajorLike(tensors[0], params_[p].dtype, shape))
          outputs.push_back(stolen(PyObject_CallOneArg(torch->emptyLike.ptr(), like.ptr())));
        else
          outputs.push_back(newEmpty(like, shapeTuple(), dtype));
        imported[p].adopt(outputs.back(), params_[p].dtype, std::move(shape), tensors[0].device);
      } else if (cupyCall && numInputs_ && tensors[0].dtype == params_[p].dtype) {
        nb::tuple outShape = shapeTuple();
        nb::object likeDtype = getAttr(like, attrNames().dtype);
        PyObject *args[] = {outShape.ptr(), likeDtype.ptr()};
        outputs.push_back(stolen(PyObject_Vectorcall(cupy->ndarray.ptr(), args, 2, nullptr)));
      } else {
        outputs.push_back(framework.attr("empty")(shapeTuple(), params_[p].dtypeName, like));
      }
    }
  }
  for (size_t p = numInputs_; p < params_.size(); ++p) {
    if (!imported[p].imported()) {
      nb::handle a = outputs[p - numInputs_];
      imported[p].import(a, importKindOf(a), s, label(p));
    }
    tensors[p] = imported[p].tensor();
  }
  pk_status status;
  {
    nb::gil_scoped_release release;
    status = pk_launch(kernel_, tensors.data(), tensors.size(), reinterpret_cast<void *>(s));
  }
  pkc::check(status);
  if (single)
    return outputs[0];
  nb::tuple result = nb::steal<nb::tuple>(PyTuple_New(Py_ssize_t(outputs.size())));
  for (size_t i = 0; i < outputs.size(); ++i)
    PyTuple_SET_ITEM(result.ptr(), Py_ssize_t(i), outputs[i].release().ptr());
  return result;
}

} // namespace pkc

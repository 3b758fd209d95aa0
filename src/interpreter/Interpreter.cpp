//===- Interpreter.cpp - Exports and pallas_call grids --------------------===//
#include "interpreter/Interpreter.h"

#include "interpreter/AffineEval.h"
#include "interpreter/Evaluator.h"
#include "interpreter/MeshRuntime.h"
#include "ir/DTypeMapping.h"
#include "ir/PkDialect.h"
#include "support/ShapeText.h"

#include "llvm/ADT/DenseMap.h"

namespace pk {

using namespace interp;

namespace {

DType dtypeOfTensor(mlir::Type type) {
  return *dtypeOf(llvm::cast<mlir::RankedTensorType>(type).getElementType());
}

/// One pallas_call operand while the grid runs: the padded array and the
/// block the kernel sees.
struct OperandState {
  DType dtype;
  std::vector<int64_t> dims;   ///< the array's shape
  std::vector<int64_t> padded; ///< padded shape
  std::vector<int64_t> low;    ///< Element padding before each axis
  std::vector<int64_t> block;  ///< block shape, squeezed axes as 1
  pk::BlockSpecAttr spec;
  TensorPtr array;             ///< padded contents
  RefBuffer ref;               ///< the kernel's block
  bool writeBack = false;
};

/// Copies the window at `start` of `big` (block shape `block`) into
/// `small`, or back.
void copyBlock(Tensor &big, const std::vector<int64_t> &start, const std::vector<int64_t> &block,
               Tensor &small, bool toSmall) {
  size_t rank = block.size();
  if (rank == 0) {
    if (big.element.isFloat)
      toSmall ? small.f[0] = big.f[0] : big.f[0] = small.f[0];
    else
      toSmall ? small.i[0] = big.i[0] : big.i[0] = small.i[0];
    return;
  }
  std::vector<int64_t> bigStrides = stridesOf(big.shape);
  int64_t row = block[rank - 1];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    rows *= block[d];
  std::vector<int64_t> index(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at += (start[d] + index[d]) * bigStrides[d];
    int64_t to = r * row;
    if (big.element.isFloat) {
      if (toSmall)
        std::copy(big.f.begin() + at, big.f.begin() + at + row, small.f.begin() + to);
      else
        std::copy(small.f.begin() + to, small.f.begin() + to + row, big.f.begin() + at);
    } else {
      if (toSmall)
        std::copy(big.i.begin() + at, big.i.begin() + at + row, small.i.begin() + to);
      else
        std::copy(small.i.begin() + to, small.i.begin() + to + row, big.i.begin() + at);
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < block[d])
        break;
      index[d] = 0;
    }
  }
}

/// Whether the kernel writes to a Ref: stores, atomics, copies into it,
/// also through its views.
bool writesTo(mlir::Value ref) {
  for (mlir::OpOperand &use : ref.getUses()) {
    mlir::Operation *user = use.getOwner();
    if (llvm::isa<pk::StoreOp, pk::ScatterOp, pk::AtomicRmwOp, pk::AtomicCasOp>(user))
      return true;
    if (auto dma = llvm::dyn_cast<pk::DmaStartOp>(user); dma && dma.getDst() == ref)
      return true;
    if (llvm::isa<pk::RefViewOp, pk::RefTransposeOp, pk::RefReshapeOp>(user) &&
        writesTo(user->getResult(0)))
      return true;
  }
  return false;
}

/// Whether an operand stays where it is (pl.ANY, pltpu.HBM, plgpu.GMEM):
/// the kernel's Ref is the whole array in memory, not a block copied in.
bool staysInMemory(pk::BlockSpecAttr spec) {
  auto space = llvm::dyn_cast_or_null<pk::MemorySpaceAttr>(spec.getMemorySpace());
  return space && (space.getValue() == MemorySpace::Any || space.getValue() == MemorySpace::HBM ||
                   space.getValue() == MemorySpace::GPUGlobal);
}

class ExportRunner {
public:
  ExportRunner(const RunOptions &options) : evaluator(options.maxSteps) {}

  std::vector<TensorPtr> runPallasCall(pk::PallasCallOp op, const std::vector<TensorPtr> &inputs,
                                       const std::vector<int64_t> &symbols);

  Evaluator evaluator;
};

std::vector<TensorPtr> ExportRunner::runPallasCall(pk::PallasCallOp op,
                                                   const std::vector<TensorPtr> &inputs,
                                                   const std::vector<int64_t> &symbols) {
  std::vector<int64_t> grid;
  for (mlir::AffineExpr e : op.getGrid().getResults()) {
    int64_t g = evalAffine(e, {}, symbols);
    if (g < 0)
      evaluator.fail(op, "grid size " + std::to_string(g) + " is negative");
    grid.push_back(g);
  }
  // Operands with blocks: the inputs after the scalar-prefetch ones, then
  // the outputs. Operand i is the kernel's argument prefetch + i.
  size_t prefetch = op.getNumScalarPrefetch();
  size_t numIn = inputs.size() - prefetch, numOut = op.getOutputs().size();
  llvm::SmallVector<pk::BlockSpecAttr> specs = op.getAllSpecs();
  std::vector<OperandState> operands(numIn + numOut);
  mlir::Block &kernel = op.getKernelBlock();

  // Scalar-prefetch operands: whole arrays, shared by every program and
  // by the index maps.
  std::vector<RefBuffer> prefetched;
  for (size_t i = 0; i < prefetch; ++i) {
    DType dtype = dtypeOfTensor(op.getInputs()[i].getType());
    RefBuffer buffer{makeTensor(elementKindOf(dtype), inputs[i]->shape), dtype};
    if (buffer.data->size() > 0)
      copyBlock(*buffer.data, std::vector<int64_t>(inputs[i]->shape.size(), 0), inputs[i]->shape,
                const_cast<Tensor &>(*inputs[i]), /*toSmall=*/false);
    prefetched.push_back(buffer);
  }

  for (size_t i = 0; i < operands.size(); ++i) {
    OperandState &o = operands[i];
    o.spec = specs[i];
    if (i < numIn) {
      o.dims = inputs[prefetch + i]->shape;
      o.dtype = dtypeOfTensor(op.getInputs()[prefetch + i].getType());
    } else {
      for (mlir::AffineExpr e : op.getOutShape(i - numIn).getResults())
        o.dims.push_back(evalAffine(e, {}, symbols));
      o.dtype = dtypeOfTensor(op.getOutputs()[i - numIn].getType());
    }
    size_t rank = o.dims.size();
    for (size_t d = 0; d < rank; ++d) {
      int64_t b = o.spec.getBlockShape()[d];
      int64_t lo = o.spec.getPaddingLow()[d], hi = o.spec.getPaddingHigh()[d];
      int64_t extent = o.dims[d] + lo + hi;
      o.block.push_back(b);
      o.low.push_back(lo);
      o.padded.push_back(std::max<int64_t>(b, (extent + b - 1) / b * b));
    }
    o.array = makeTensor(elementKindOf(o.dtype), o.padded);
    fillUninitialized(*o.array, o.dtype);
    // Inputs, and outputs that alias an input, start with the array's data.
    const Tensor *initial = i < numIn ? inputs[prefetch + i].get() : nullptr;
    llvm::ArrayRef<int64_t> aliases = op.getInputOutputAliases();
    for (size_t a = 0; a + 1 < aliases.size(); a += 2)
      if (i >= numIn && static_cast<size_t>(aliases[a + 1]) == i - numIn)
        initial = inputs[aliases[a]].get();
    if (initial && initial->size() > 0)
      copyBlock(*o.array, o.low, o.dims, const_cast<Tensor &>(*initial), /*toSmall=*/false);
    llvm::SmallVector<int64_t> kernelShape = o.spec.getKernelShape();
    o.ref.data = makeTensor(elementKindOf(o.dtype), std::vector<int64_t>(kernelShape.begin(), kernelShape.end()));
    o.ref.dtype = o.dtype;
    // Inputs are written back only if the kernel writes to them.
    o.writeBack = i >= numIn || writesTo(kernel.getArgument(prefetch + i));
  }
  // An output aliasing an input that stays in memory is that input's
  // buffer: what the kernel writes through either Ref (a DMA into the
  // input's, stores into the output's block) is the output. Where the
  // output stays in memory too, both Refs are the same memory.
  llvm::ArrayRef<int64_t> aliases = op.getInputOutputAliases();
  std::vector<std::optional<size_t>> sameRefAs(operands.size());
  for (size_t a = 0; a + 1 < aliases.size(); a += 2) {
    size_t in = static_cast<size_t>(aliases[a]) - prefetch, out = numIn + aliases[a + 1];
    // (A block cut past the array's end pads it: then the buffers differ in
    // shape, and the output keeps its own, starting with the input's data.)
    if (aliases[a] < static_cast<int64_t>(prefetch) || !staysInMemory(operands[in].spec) ||
        operands[out].padded != operands[in].padded || operands[out].low != operands[in].low)
      continue;
    operands[out].array = operands[in].array;
    if (staysInMemory(operands[out].spec)) {
      sameRefAs[out] = in;
      operands[in].writeBack = true;
      operands[out].writeBack = false;
    }
  }
  // Scratch buffers and semaphores live for the whole call.
  std::vector<RefBuffer> scratch;
  std::vector<std::unique_ptr<SemaphoreArray>> semaphores;
  for (mlir::Attribute t : op.getScratchTypes()) {
    mlir::Type type = llvm::cast<mlir::TypeAttr>(t).getValue();
    if (auto sem = llvm::dyn_cast<pk::SemaphoreType>(type)) {
      semaphores.push_back(std::make_unique<SemaphoreArray>());
      semaphores.back()->counts.assign(static_cast<size_t>(sem.getNumElements()), 0);
      scratch.emplace_back();
      continue;
    }
    auto refType = llvm::cast<pk::RefType>(type);
    DType dtype = *dtypeOf(refType.getElementType());
    RefBuffer buffer{makeTensor(elementKindOf(dtype), std::vector<int64_t>(refType.getShape())),
                     dtype};
    fillUninitialized(*buffer.data, dtype);
    scratch.push_back(buffer);
    semaphores.emplace_back();
  }
  evaluator.pendingDmas.clear();

  int64_t points = 1;
  for (int64_t g : grid)
    points *= g;
  std::vector<int64_t> index(grid.size(), 0);
  ProgramContext context{{}, grid, &symbols};
  bool computed = !op.getIndexMap().empty();
  for (int64_t point = 0; point < points; ++point) {
    context.programIds = index;
    evaluator.clearValues();
    evaluator.setContext(context);
    std::vector<int64_t> computedIndices;
    if (computed) {
      for (size_t p = 0; p < prefetch; ++p)
        evaluator.bindRef(op.getIndexMap().front().getArgument(grid.size() + p), &prefetched[p]);
      std::vector<TensorPtr> args;
      for (int64_t g : index) {
        TensorPtr t = makeTensor(elementKindOf(DType::I32), {});
        t->i[0] = g;
        args.push_back(t);
      }
      for (const TensorPtr &t : evaluator.runRegion(op.getIndexMap(), args))
        computedIndices.push_back(t->i[0]);
      evaluator.clearValues();
      evaluator.setContext(context);
    }
    size_t nextComputed = 0;
    std::vector<std::vector<int64_t>> starts(operands.size());
    for (size_t i = 0; i < operands.size(); ++i) {
      OperandState &o = operands[i];
      std::vector<int64_t> blockIndex;
      if (mlir::AffineMap map = o.spec.getIndexMap())
        for (mlir::AffineExpr e : map.getResults())
          blockIndex.push_back(evalAffine(e, index, symbols));
      else
        for (size_t d = 0; d < o.dims.size(); ++d)
          blockIndex.push_back(computedIndices[nextComputed++]);
      for (size_t d = 0; d < o.dims.size(); ++d) {
        int64_t start = o.spec.getDimKinds()[d] == pk::BlockDimKind::Blocked
                            ? blockIndex[d] * o.block[d]
                            : blockIndex[d];
        // lax.dynamic_slice counts a negative start from the end of the
        // (padded) array, then clamps the window into it.
        if (start < 0)
          start += o.padded[d];
        starts[i].push_back(std::max<int64_t>(0, std::min(start, o.padded[d] - o.block[d])));
      }
      if (sameRefAs[i]) {
        evaluator.bindRef(kernel.getArgument(prefetch + i), &operands[*sameRefAs[i]].ref);
        continue;
      }
      copyBlock(*o.array, starts[i], o.block, *o.ref.data, /*toSmall=*/true);
      evaluator.bindRef(kernel.getArgument(prefetch + i), &o.ref);
    }
    for (size_t p = 0; p < prefetch; ++p)
      evaluator.bindRef(kernel.getArgument(p), &prefetched[p]);
    for (size_t s = 0; s < scratch.size(); ++s) {
      mlir::Value arg = kernel.getArgument(prefetch + operands.size() + s);
      if (semaphores[s])
        evaluator.syncObjects[arg] = semaphores[s].get();
      else
        evaluator.bindRef(arg, &scratch[s]);
    }
    evaluator.runRegion(op.getKernel(), {});
    for (size_t i = 0; i < operands.size(); ++i)
      if (operands[i].writeBack)
        copyBlock(*operands[i].array, starts[i], operands[i].block, *operands[i].ref.data,
                  /*toSmall=*/false);
    for (size_t d = grid.size(); d-- > 0;) {
      if (++index[d] < grid[d])
        break;
      index[d] = 0;
    }
  }

  // Every copy must have been waited for, every signal matched.
  for (size_t s = 0; s < semaphores.size(); ++s)
    if (semaphores[s])
      evaluator.checkSemaphoresSettled(op, *semaphores[s],
                                       kernel.getArgument(prefetch + operands.size() + s).getType(),
                                       "the kernel ends");

  std::vector<TensorPtr> results;
  for (size_t i = numIn; i < operands.size(); ++i) {
    OperandState &o = operands[i];
    TensorPtr out = makeTensor(elementKindOf(o.dtype), o.dims);
    if (out->size() > 0)
      copyBlock(*o.array, o.low, o.dims, *out, /*toSmall=*/true);
    results.push_back(out);
  }
  return results;
}


} // namespace

std::vector<int64_t> concreteShape(const ExportSignature::Array &array,
                                   const std::vector<int64_t> &symbols) {
  std::vector<int64_t> shape;
  for (mlir::AffineExpr e : array.shape.getResults())
    shape.push_back(evalAffine(e, {}, symbols));
  return shape;
}

HostArray deterministicInput(DType dtype, const std::vector<int64_t> &shape, unsigned argument) {
  HostArray array(dtype, shape);
  for (int64_t k = 0; k < array.size(); ++k) {
    int64_t v = (37 * (k % 257) + 101 * static_cast<int64_t>(argument)) % 257;
    if (isFloat(dtype))
      array.setDouble(k, static_cast<double>(v) / 64.0 - 2.0);
    else if (dtype == DType::Bool)
      array.setInt(k, v % 2);
    else if (isUnsigned(dtype))
      array.setInt(k, v % 256);
    else
      array.setInt(k, v % 256 - 128);
  }
  return array;
}

RunResult runExport(mlir::ModuleOp module, llvm::StringRef name,
                    const std::vector<HostArray> &inputs, const RunOptions &options) {
  RunResult result;
  pk::ExportOp exportOp;
  for (auto op : module.getOps<pk::ExportOp>())
    if (op.getSymName() == name)
      exportOp = op;
  if (!exportOp) {
    result.error = "no export named '" + name.str() + "'";
    return result;
  }
  std::optional<ExportSignature> signature = exportSignature(module, name);
  if (inputs.size() != signature->arguments.size()) {
    result.error = "export '" + name.str() + "' takes " +
                   std::to_string(signature->arguments.size()) + " arguments but " +
                   std::to_string(inputs.size()) + " were given";
    return result;
  }

  // Bind the symbolic sizes from the arguments, then check every shape.
  std::vector<int64_t> symbols(signature->symbols.size(), -1);
  std::vector<std::string> boundBy(symbols.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ExportSignature::Array &a = signature->arguments[i];
    if (inputs[i].dtype() != a.dtype) {
      result.error = "argument '" + a.name + "' must be " + numpyName(a.dtype) + ", got " +
                     numpyName(inputs[i].dtype());
      return result;
    }
    if (inputs[i].rank() != static_cast<int64_t>(a.shape.getNumResults())) {
      result.error = "argument '" + a.name + "' must have rank " +
                     std::to_string(a.shape.getNumResults()) + ", got shape " +
                     shapeText(inputs[i].shape());
      return result;
    }
    for (unsigned d = 0; d < a.shape.getNumResults(); ++d)
      if (auto s = llvm::dyn_cast<mlir::AffineSymbolExpr>(a.shape.getResult(d)))
        if (symbols[s.getPosition()] < 0) {
          symbols[s.getPosition()] = inputs[i].shape()[d];
          boundBy[s.getPosition()] = a.name;
        }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ExportSignature::Array &a = signature->arguments[i];
    std::vector<int64_t> expected = concreteShape(a, symbols);
    if (expected != inputs[i].shape()) {
      result.error = "argument '" + a.name + "' has shape " + shapeText(inputs[i].shape()) +
                     " but the signature requires " + shapeText(expected);
      for (size_t s = 0; s < symbols.size(); ++s)
        result.error += (s ? ", " : " (") + signature->symbols[s] + " = " +
                        std::to_string(symbols[s]) + " from '" + boundBy[s] + "'" +
                        (s + 1 == symbols.size() ? ")" : "");
      return result;
    }
  }

  ExportRunner runner(options);
  llvm::DenseMap<mlir::Value, TensorPtr> values;
  mlir::Block &body = exportOp.getBody().front();
  for (size_t i = 0; i < inputs.size(); ++i)
    values[body.getArgument(i)] = tensorFromHost(inputs[i]);
  try {
    for (mlir::Operation &op : body) {
      if (auto call = llvm::dyn_cast<pk::PallasCallOp>(op)) {
        std::vector<TensorPtr> operands;
        for (mlir::Value v : call.getInputs())
          operands.push_back(values.lookup(v));
        // Grid bounds computed from data are the symbols after the export's.
        std::vector<int64_t> gridSymbols = symbols;
        for (mlir::Value bound : call.getGridBounds())
          gridSymbols.push_back(std::max<int64_t>(0, values.lookup(bound)->i.at(0))); // < 0: none
        std::vector<TensorPtr> outputs = runner.runPallasCall(call, operands, gridSymbols);
        for (size_t k = 0; k < outputs.size(); ++k)
          values[call.getResult(k)] = outputs[k];
      } else if (auto kernel = llvm::dyn_cast<pk::MeshKernelOp>(op)) {
        std::vector<TensorPtr> operands;
        for (mlir::Value v : kernel.getInputs())
          operands.push_back(values.lookup(v));
        std::vector<TensorPtr> outputs = runMeshKernel(kernel, operands, symbols, options.maxSteps);
        for (size_t k = 0; k < outputs.size(); ++k)
          values[kernel.getResult(k)] = outputs[k];
      } else if (auto ret = llvm::dyn_cast<pk::ReturnOp>(op)) {
        for (unsigned k = 0; k < ret.getResults().size(); ++k) {
          mlir::Value v = ret.getResults()[k];
          const ExportSignature::Array &r = signature->results[k];
          HostArray out(r.dtype, concreteShape(r, symbols));
          storeToHost(*values.lookup(v), out);
          result.outputs.push_back(std::move(out));
        }
      } else {
        runner.evaluator.fail(&op, "unexpected operation in an export's body");
      }
    }
  } catch (const RunError &e) {
    result.outputs.clear();
    result.error = e.message;
    result.errorLocation = e.location;
  }
  return result;
}

} // namespace pk

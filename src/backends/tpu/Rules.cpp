//===- Rules.cpp - The TPU rules --------------------------------------------===//
//
// Where a rule comes from Pallas's Mosaic lowering (JAX 0.10,
// jax/_src/pallas/mosaic/lowering.py), pkc applies the same rule at compile
// time, so that a kernel pkc accepts is one Pallas would lower too.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/Rules.h"

#include "backends/tpu/KernelPlan.h"
#include "support/ShapeText.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace pk::backends::tpu {

using namespace mlir;

namespace {

std::string str(AffineExpr e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  e.print(os);
  return s;
}

using pk::shapeText; // the overload below would hide it

std::string shapeText(AffineMap shape, pk::ExportOp exportOp) {
  std::string s = "(";
  for (auto [i, e] : llvm::enumerate(shape.getResults())) {
    std::string dim = str(e);
    // Affine printing names symbols s0, s1...; show the user's names.
    for (unsigned k = exportOp.getNumSymbols(); k-- > 0;) {
      std::string from = "s" + std::to_string(k);
      std::string to = llvm::cast<StringAttr>(exportOp.getSymbols()[k]).str();
      for (size_t at = dim.find(from); at != std::string::npos; at = dim.find(from, at + to.size()))
        dim.replace(at, from.size(), to);
    }
    s += (i ? ", " : "") + dim;
  }
  return s + (shape.getNumResults() == 1 ? ",)" : ")");
}

/// How the user knows an operand: its kernel parameter name when known.
std::string operandName(pk::PallasCallOp call, unsigned kernelArg) {
  unsigned numIn = call.getInputs().size(), numOut = call.getOutputs().size();
  std::string role = kernelArg < numIn ? "input " + std::to_string(kernelArg)
                     : kernelArg < numIn + numOut
                         ? "output " + std::to_string(kernelArg - numIn)
                         : "scratch buffer " + std::to_string(kernelArg - numIn - numOut);
  if (ArrayAttr names = call.getKernelArgNamesAttr())
    if (kernelArg < names.size())
      return "'" + llvm::cast<StringAttr>(names[kernelArg]).str() + "' (" + role + ")";
  return role;
}

bool equalsConstant(AffineExpr e, int64_t value) {
  auto c = llvm::dyn_cast<AffineConstantExpr>(e);
  return c && c.getValue() == value;
}

/// The element width a TPU stores: bools take 32 bits.
unsigned storedBitWidth(Type element) {
  unsigned width = element.getIntOrFloatBitWidth();
  return width == 1 ? 32 : width;
}

bool is64Bit(Type type) {
  if (auto shaped = llvm::dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  if (auto ref = llvm::dyn_cast<pk::RefType>(type))
    type = ref.getElementType();
  return type.isIntOrFloat() && type.getIntOrFloatBitWidth() == 64;
}

/// A 64-bit value that is not a constant: a block argument (a kernel Ref,
/// reported at the pallas_call, or a loop-carried value, reported where it
/// was made) or an op's result.
bool isNonConstant64Bit(Value v) {
  Operation *def = v.getDefiningOp();
  return is64Bit(v.getType()) && !(def && def->hasTrait<OpTrait::ConstantLike>());
}

InFlightDiagnostic no64Bit(Operation *op, Type type) {
  return op->emitError() << "64-bit types are not supported on TPU (found " << type
                         << "); use a 32-bit type";
}

/// What to add to a block's message when pkc chose the block for array
/// code outside a kernel (over an array of `arrayShape`), which runs one
/// program per index of a symbolic size.
std::string chosenForArrayCode(pk::PallasCallOp call, AffineMap arrayShape) {
  if (!call->hasAttr("pk.generated"))
    return "";
  bool symbolic = llvm::any_of(arrayShape.getResults(),
                               [](AffineExpr e) { return !llvm::isa<AffineConstantExpr>(e); });
  if (!symbolic)
    return "; pkc chose this block for array code outside a kernel: do the work in a kernel, "
           "whose BlockSpecs choose the blocks";
  return "; pkc chose this block for array code outside a kernel, which runs one program per "
         "index of a symbolic size: fix the size with -D (e.g. -D N=256) or do the work in a "
         "kernel";
}

LogicalResult checkWindow(pk::PallasCallOp call, pk::ExportOp exportOp, const Window &w,
                          unsigned kernelArg, Type element) {
  pk::BlockSpecAttr spec = w.spec;
  std::string name = operandName(call, kernelArg);
  std::string block = shapeText(w.windowBounds);
  std::string array = shapeText(w.arrayShape, exportOp);
  if (auto space = llvm::dyn_cast_or_null<pk::MemorySpaceAttr>(spec.getMemorySpace());
      space && (space.getValue() == pk::MemorySpace::GPUGlobal ||
                space.getValue() == pk::MemorySpace::GPUShared))
    return call.emitError() << "the block of " << name << " is in the GPU memory space '"
                            << pk::stringifyMemorySpace(space.getValue())
                            << "'; on TPU use pltpu.VMEM, pltpu.SMEM or pltpu.ANY";
  if (!w.windowed) {
    if (!w.trivial)
      return call.emitError() << "the block of " << name << " is in memory space '"
                              << mosaic::stringifyMemorySpace(w.memorySpace)
                              << "', which a kernel reaches only by DMA: its block must be the "
                                 "whole array "
                              << array << " with an index map of zeros, got " << block;
    return success();
  }
  if (w.memorySpace == mosaic::MemorySpace::SMEM && w.trivial)
    return success(); // copied whole into SMEM: no tiling constraint
  if (spec.getRank() == 0)
    return call.emitError() << "the block of " << name
                            << " has rank 0; on TPU blocks need at least one dimension";
  if (w.elementWindow)
    for (pk::BlockDimKind kind : spec.getDimKinds())
      if (kind == pk::BlockDimKind::Blocked)
        return call.emitError() << "the block of " << name
                                << " mixes pl.Element and blocked dimensions; on TPU every "
                                   "dimension of such a block must be pl.Element or squeezed";
  ArrayRef<int64_t> sizes = w.windowBounds;
  ArrayRef<AffineExpr> dims = w.arrayShape.getResults();
  size_t rank = sizes.size();
  if (rank >= 2) {
    int64_t last = sizes[rank - 1], second = sizes[rank - 2];
    bool lastOk = last % 128 == 0 || equalsConstant(dims[rank - 1], last);
    bool secondOk = second % 8 == 0 || equalsConstant(dims[rank - 2], second);
    if (!lastOk || !secondOk)
      return call.emitError()
             << "on TPU the last two dimensions of a block must be divisible by 8 and 128 "
                "(or equal the array's); the block "
             << block << " of " << name << " over the array " << array << " has "
             << (!lastOk ? std::to_string(last) + " in the last dimension"
                         : std::to_string(second) + " in the second-to-last")
             << " (use a multiple of " << (!lastOk ? "128" : "8") << " or the whole dimension)"
             << chosenForArrayCode(call, w.arrayShape);
    return success();
  }
  int64_t size = sizes[0];
  int64_t minTile = 128 * (32 / storedBitWidth(element));
  bool ok = equalsConstant(dims[0], size) || size % (8 * 128) == 0 ||
            (size >= minTile && llvm::isPowerOf2_64(size));
  if (!ok)
    return call.emitError()
           << "on TPU a 1-D block must be the whole array, a multiple of 1024, or a power of two "
              "of at least "
           << minTile << " (128 lanes x " << 32 / storedBitWidth(element) << " per 32 bits for "
           << element << "); the block " << block << " of " << name << " over the array " << array
           << " is none of these" << chosenForArrayCode(call, w.arrayShape);
  return success();
}

} // namespace

/// What to add to a message about `op` when it is array code at export
/// level rather than the user's kernel: XLA would run it in JAX, pkc runs
/// it as a generated Mosaic kernel, under the same rules.
static std::string outsideKernels(Operation *op) {
  auto call = op->getParentOfType<pk::PallasCallOp>();
  if (!call || !call->hasAttr("pk.generated"))
    return "";
  return "; this is array code outside a kernel, which pkc runs on TPU as a generated Mosaic "
         "kernel (in JAX, XLA runs it): do it inside a kernel in a form Mosaic supports, or "
         "give the kernel the array as it is and choose its blocks with index maps";
}

LogicalResult checkCall(pk::PallasCallOp call) {
  auto exportOp = call->getParentOfType<pk::ExportOp>();
  if (!exportOp)
    return call.emitError() << "a pallas_call must be inside a pk.export";
  // pl.Buffered as Mosaic's pipeline_mode takes it (Pallas's TPU lowering
  // refuses the same).
  unsigned inputs = call.getWindowedInputs().size();
  for (unsigned i = 0, specs = inputs + call.getOutputs().size(); i < specs; ++i) {
    DictionaryAttr mode = pipelineModeOf(call, i);
    if (!mode)
      continue;
    std::string what = i < inputs ? "input " + std::to_string(i + call.getNumScalarPrefetch())
                                  : "output " + std::to_string(i - inputs);
    int64_t count = mode.getAs<IntegerAttr>("buffer_count").getInt();
    if (count > 2)
      return call.emitError() << "the BlockSpec of " << what << " asks for pl.Buffered(" << count
                              << "); on TPU only single (1) and double (2) buffering are supported";
    if (mode.get("use_lookahead"))
      return call.emitError() << "the BlockSpec of " << what
                              << " asks for pl.Buffered(use_lookahead=True), which the TPU "
                                 "lowering does not support";
    if (mode.get("revisit"))
      return call.emitError()
             << "the BlockSpec of " << what
             << " asks for pl.Buffered(revisit=...), which pkc's TPU lowering does "
                "not support yet";
  }
  std::string error;
  std::optional<SmallVector<mosaic::DimensionSemantics>> semantics = dimensionSemantics(call, error);
  if (!semantics)
    return call.emitError() << error;
  for (auto [axis, s] : llvm::enumerate(*semantics))
    if (s == mosaic::DimensionSemantics::CoreParallel &&
        !llvm::isa<AffineConstantExpr>(call.getGrid().getResult(axis)))
      return call.emitError() << "grid axis " << axis
                              << " is core_parallel, so its size must be static on TPU";

  for (Value v : call.getInputs())
    if (is64Bit(v.getType()))
      return no64Bit(call, v.getType());
  for (Type t : call.getResultTypes())
    if (is64Bit(t))
      return no64Bit(call, t);

  // The plan holds each window's memref, bounds and memory space.
  Block &kernel = call.getKernelBlock();
  unsigned prefetch = call.getNumScalarPrefetch();
  unsigned numIn = call.getInputs().size(), numOut = call.getOutputs().size();
  for (unsigned i = numIn + numOut; i < kernel.getNumArguments(); ++i) {
    auto ref = llvm::dyn_cast<pk::RefType>(kernel.getArgument(i).getType());
    if (!ref)
      continue; // a semaphore
    if (is64Bit(ref))
      return no64Bit(call, ref.getElementType());
    if (auto space = llvm::dyn_cast_or_null<pk::MemorySpaceAttr>(ref.getMemorySpace());
        space && (space.getValue() == pk::MemorySpace::GPUGlobal ||
                  space.getValue() == pk::MemorySpace::GPUShared))
      return call.emitError() << operandName(call, i) << " is in the GPU memory space '"
                              << pk::stringifyMemorySpace(space.getValue())
                              << "'; on TPU use pltpu.VMEM or pltpu.SMEM";
  }

  KernelPlan plan = planKernel(call);
  for (const Window &w : plan.windows) {
    unsigned kernelArg = prefetch + w.specIndex;
    Type element = llvm::cast<pk::RefType>(kernel.getArgument(kernelArg).getType()).getElementType();
    if (failed(checkWindow(call, exportOp, w, kernelArg, element)))
      return failure();
    if (!plan.hasGrid() && !w.trivial)
      return call.emitError() << "a pallas_call without a grid needs whole-array blocks on TPU; "
                              << "the block " << shapeText(w.windowBounds) << " of "
                              << operandName(call, kernelArg) << " is not the array "
                              << shapeText(w.arrayShape, exportOp);
  }
  return success();
}

namespace {

/// A kernel argument that is the block of a windowed input or output.
bool isWindow(Value ref) {
  auto arg = llvm::dyn_cast<BlockArgument>(ref);
  auto call = arg ? llvm::dyn_cast<pk::PallasCallOp>(arg.getOwner()->getParentOp()) : nullptr;
  if (!call || arg.getOwner() != &call.getKernelBlock())
    return false;
  unsigned first = call.getNumScalarPrefetch();
  unsigned count = call.getInSpecs().size() + call.getOutSpecs().size();
  return arg.getArgNumber() >= first && arg.getArgNumber() < first + count;
}

/// The memory space of the Mosaic memref a pk Ref becomes.
mosaic::MemorySpace refSpace(Value ref) {
  return mosaicMemorySpace(llvm::cast<pk::RefType>(ref.getType()).getMemorySpace());
}

LogicalResult checkRefAccess(Operation *op, Value ref, bool isLoad, Value mask, Type valueType,
                             ArrayRef<int64_t> strides) {
  mosaic::MemorySpace space = refSpace(ref);
  const char *what = isLoad ? "read" : "written";
  if (space == mosaic::MemorySpace::Any || space == mosaic::MemorySpace::HBM)
    return op->emitError() << "a Ref in memory space '" << mosaic::stringifyMemorySpace(space)
                           << "' cannot be " << what
                           << " directly on TPU; copy it to or from a VMEM buffer with "
                              "pltpu.make_async_copy / pltpu.sync_copy, or give its BlockSpec "
                              "memory_space=pltpu.VMEM";
  if (space == mosaic::MemorySpace::SMEM) {
    if (llvm::isa<ShapedType>(valueType))
      return op->emitError() << "only scalars can be " << what
                             << " in SMEM on TPU; index one element (got a window of type "
                             << valueType << ")";
    if (mask)
      return op->emitError() << "masked accesses to SMEM are not supported on TPU";
    return success();
  }
  // Windows keep squeezed axes, so only other rank-0 Refs (scratch
  // buffers) would need a 0-d vector, which Mosaic does not have.
  if (llvm::cast<pk::RefType>(ref.getType()).getRank() == 0 && !isWindow(ref))
    return op->emitError() << "a rank-0 Ref in VMEM cannot be " << what
                           << " on TPU; use a (1, 1) buffer or pltpu.SMEM((1,), dtype)";
  if (mask) {
    if (isLoad)
      return op->emitError()
             << "masked loads are not supported on TPU (Pallas's TPU lowering has none); load "
                "the whole window and select with jnp.where";
    Type element = llvm::cast<ShapedType>(valueType).getElementType();
    if (element.getIntOrFloatBitWidth() != 32)
      return op->emitError() << "masked stores on TPU need 32-bit elements, got " << element
                             << "; store a 32-bit value or merge with jnp.where and store the "
                                "whole window";
    if (llvm::any_of(strides, [](int64_t s) { return s != 1; }))
      return op->emitError() << "masked strided stores are not supported on TPU";
    if (mask.getType() != llvm::cast<ShapedType>(valueType).clone(IntegerType::get(op->getContext(), 1)))
      return op->emitError() << "on TPU a store's mask must have the stored value's shape";
  }
  return success();
}

const char *reductionName(pk::ReductionKind kind) {
  switch (kind) {
  case pk::ReductionKind::Mul:
    return "products (jnp.prod)";
  case pk::ReductionKind::Xor:
    return "xor reductions";
  case pk::ReductionKind::MaxUI:
  case pk::ReductionKind::MinUI:
    return "max/min over unsigned integers";
  default:
    return nullptr;
  }
}

} // namespace

LogicalResult checkOp(Operation *op) {
  // A 64-bit type is reported once, where it first appears: at the op that
  // makes it (or the pallas_call, for its operands), not at every op it
  // reaches. Constants are reported at their users: `x * 2` on an f64 `x`
  // makes an f64 constant too.
  if (!op->hasTrait<OpTrait::ConstantLike>() &&
      llvm::none_of(op->getOperands(), isNonConstant64Bit)) {
    for (Type t : op->getResultTypes())
      if (is64Bit(t))
        return no64Bit(op, t);
    for (Type t : op->getOperandTypes())
      if (is64Bit(t))
        return no64Bit(op, t);
  }
  llvm::StringRef name = op->getName().getStringRef();
  if (name == "pk.atomic_rmw" || name == "pk.atomic_cas")
    return op->emitError() << "atomics are a GPU feature: TPU programs of a grid do not run "
                              "concurrently on shared memory, so Mosaic has no atomic "
                              "operations; accumulate in an output block or a scratch buffer";
  if (llvm::isa<pk::GatherOp, pk::ScatterOp>(op))
    return op->emitError() << "indexing a Ref with integer arrays (a gather or scatter) is not "
                              "supported on TPU; Mosaic reads and writes whole windows";
  if (auto load = llvm::dyn_cast<pk::LoadOp>(op))
    return checkRefAccess(op, load.getRef(), true, load.getMask(), load.getType(),
                          load.getStrides());
  if (auto store = llvm::dyn_cast<pk::StoreOp>(op))
    return checkRefAccess(op, store.getRef(), false, store.getMask(), store.getValue().getType(),
                          store.getStrides());
  if (auto transpose = llvm::dyn_cast<pk::TransposeOp>(op)) {
    // Mosaic permutes the vreg array along the leading (untiled) axes and
    // transposes within tiles, but does not move an axis between the two.
    ArrayRef<int64_t> perm = transpose.getPermutation();
    int64_t rank = static_cast<int64_t>(perm.size());
    for (int64_t i = 0; i < rank; ++i)
      if ((i < rank - 2) != (perm[i] < rank - 2))
        return op->emitError() << "on TPU a transpose permutes the leading axes among "
                                  "themselves and the last two among themselves; the "
                                  "permutation "
                               << shapeText(perm) << " moves axis " << perm[i] << " to position "
                               << i << outsideKernels(op);
    return success();
  }
  if (auto slice = llvm::dyn_cast<pk::SliceOp>(op)) {
    if (llvm::any_of(slice.getStrides(), [](int64_t s) { return s != 1; }))
      return op->emitError() << "strided or reversed slices of values (x[::2], jnp.flip, and "
                                "the scans pkc builds from them: jnp.cumsum and "
                                "lax.associative_scan) are not supported on TPU; read a "
                                "strided window from the Ref instead (x_ref[::2])"
                             << outsideKernels(op);
    return success();
  }
  if (auto dot = llvm::dyn_cast<pk::DotOp>(op)) {
    auto lhs = llvm::cast<RankedTensorType>(dot.getLhs().getType());
    auto rhs = llvm::cast<RankedTensorType>(dot.getRhs().getType());
    if (lhs.getRank() != 2 || rhs.getRank() != 2)
      return op->emitError() << "on TPU matrix products take 2-D operands";
    // Mosaic's matmul reads every integer as signed; Pallas rejects
    // unsigned operands rather than compute wrong products, and so do we.
    if (dot.getUnsignedOperands())
      return op->emitError() << "unsigned integer matrix products are not supported on TPU (Mosaic "
                                "reads integer operands as signed); cast the operands to a signed "
                                "type before the dot";
    Type result = llvm::cast<RankedTensorType>(dot.getType()).getElementType();
    if (!result.isF32() && !result.isBF16() && !result.isF16() && !result.isInteger(32) &&
        !result.isInteger(16) && !result.isInteger(8))
      return op->emitError() << "on TPU a matrix product cannot produce " << result;
    return success();
  }
  if (auto reduce = llvm::dyn_cast<pk::ReduceOp>(op)) {
    if (const char *what = reductionName(reduce.getKind()))
      return op->emitError() << what << " are not supported on TPU (Mosaic has no such reduction)";
    Type element = llvm::cast<RankedTensorType>(reduce.getOperand().getType()).getElementType();
    bool logical = reduce.getKind() == pk::ReductionKind::And ||
                   reduce.getKind() == pk::ReductionKind::Or;
    if (logical && !element.isInteger(1))
      return op->emitError() << "bitwise and/or reductions over integers are not supported on "
                                "TPU (only over bools: jnp.all / jnp.any)";
    if (!logical && llvm::isa<IntegerType>(element) && !element.isInteger(32))
      return op->emitError() << "on TPU integer reductions need int32 values, got " << element
                             << "; convert with .astype(jnp.int32) first";
    return success();
  }
  if (auto arg = llvm::dyn_cast<pk::ArgReduceOp>(op)) {
    Type element = llvm::cast<RankedTensorType>(arg.getOperand().getType()).getElementType();
    if (!element.isF32())
      return op->emitError() << "on TPU argmax/argmin take float32 values, got " << element
                             << "; convert with .astype(jnp.float32) first";
    if (arg.getKind() != pk::ReductionKind::MaxF && arg.getKind() != pk::ReductionKind::MinF)
      return op->emitError() << "on TPU argmax/argmin take float32 values";
    return success();
  }
  return success();
}

bool checkModule(ModuleOp module) {
  bool ok = true;
  module.walk([&](pk::PallasCallOp call) {
    if (failed(checkCall(call)))
      ok = false;
    auto checkRegion = [&](Region &region) {
      region.walk([&](Operation *op) {
        if (failed(checkOp(op)))
          ok = false;
      });
    };
    checkRegion(call.getKernel());
    checkRegion(call.getIndexMap());
  });
  return ok;
}

} // namespace pk::backends::tpu

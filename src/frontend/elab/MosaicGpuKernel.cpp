//===- MosaicGpuKernel.cpp - plgpu.kernel, core_map, run_state, run_scoped ===//
//
// The structure of a Mosaic GPU program: a pk.mesh_kernel per plgpu.kernel
// call or pl.core_map (inside pl.run_state, whose Refs become the kernel's
// in/out operands), pk.run_scoped for every scratch allocation (the
// kernel's scratch_shapes too: plgpu.kernel allocates them with a
// run_scoped collective over the thread axis, as JAX does), and
// pk.axis_index for lax.axis_index.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/StateRefs.h"
#include "frontend/elab/Tree.h"
#include "ir/DTypeMapping.h"
#include "ir/MosaicGpuRules.h"
#include "support/ShapeText.h"

namespace pk::elab {

namespace {

/// A pytree whose leaves satisfy a predicate (allocations, arrays).
struct Tree {
  enum class Kind { Leaf, None, Tuple, List, Dict } kind = Kind::Leaf;
  std::vector<Tree> children;
  std::vector<Obj> keys;
};

Tree flattenWhere(Elaborator &el, const Obj &o, const std::function<bool(const Obj &)> &isLeaf,
                  std::vector<Obj> &leaves, SourceRange r, const char *what) {
  Tree t;
  if (isNone(o)) {
    t.kind = Tree::Kind::None;
  } else if (auto *seq = llvm::dyn_cast<SequenceObj>(o.get())) {
    t.kind = seq->isList() ? Tree::Kind::List : Tree::Kind::Tuple;
    for (const Obj &item : seq->items)
      t.children.push_back(flattenWhere(el, item, isLeaf, leaves, r, what));
  } else if (auto *dict = llvm::dyn_cast<DictObj>(o.get())) {
    t.kind = Tree::Kind::Dict;
    for (const auto &[k, v] : dict->entries) {
      t.keys.push_back(k);
      t.children.push_back(flattenWhere(el, v, isLeaf, leaves, r, what));
    }
  } else if (isLeaf(o)) {
    leaves.push_back(o);
  } else {
    el.fail(r, std::string(what) + ", got " + repr(*o));
  }
  return t;
}

Obj rebuild(const Tree &t, const std::vector<Obj> &leaves, size_t &next) {
  switch (t.kind) {
  case Tree::Kind::Leaf:
    return leaves[next++];
  case Tree::Kind::None:
    return none();
  case Tree::Kind::Tuple:
  case Tree::Kind::List: {
    std::vector<Obj> items;
    for (const Tree &c : t.children)
      items.push_back(rebuild(c, leaves, next));
    return t.kind == Tree::Kind::List ? makeList(items) : makeTuple(items);
  }
  case Tree::Kind::Dict: {
    auto d = std::make_shared<DictObj>();
    for (size_t i = 0; i < t.children.size(); ++i)
      d->entries.emplace_back(t.keys[i], rebuild(t.children[i], leaves, next));
    return d;
  }
  }
  return none();
}

/// What an allocation becomes inside the scope.
Obj refFor(mlir::Value arg) {
  mlir::Type type = arg.getType();
  if (auto ref = llvm::dyn_cast<pk::RefType>(type))
    return std::make_shared<RefObj>(arg, std::vector<int64_t>(ref.getShape()),
                                    *dtypeOf(ref.getElementType()));
  if (llvm::isa<pk::BarrierType>(type))
    return std::make_shared<SyncRefObj>(MgpuObject::Which::BarrierRef, arg);
  return std::make_shared<SyncRefObj>(MgpuObject::Which::SemaphoreRef, arg);
}

bool isAllocation(const Obj &o) {
  return llvm::isa<AllocationObj, ScratchShapeObj, RefUnionObj>(o.get());
}

bool isRefAllocation(const Obj &o) { return llvm::isa<AllocationObj>(o.get()); }

/// Where the Refs of a plgpu.RefUnion lie in its buffer, as JAX's
/// flatten_ref_union lays them out: each group from the buffer's start,
/// its Refs one after another, each at a multiple of 1024 bytes
/// (SMEM_ALIGNMENT) or of 4 columns (TMEM_COL_ALIGNMENT).
struct UnionLayout {
  pk::RefType buffer;
  std::vector<Tree> groups;
  std::vector<std::vector<pk::RefType>> types; ///< per group, its Refs'
  std::vector<std::vector<int64_t>> offsets;   ///< bytes, or columns
};

UnionLayout unionLayout(Elaborator &el, const RefUnionObj &u) {
  UnionLayout layout;
  bool tmem = u.space == MemorySpace::GPUTensorMemory;
  int64_t alignment = tmem ? 4 : 1024, size = 0;
  for (const Obj &group : u.groups) {
    std::vector<Obj> leaves;
    layout.groups.push_back(flattenWhere(el, group, isRefAllocation, leaves, u.range,
                                         "plgpu.RefUnion holds plgpu.SMEM or plgpu.TMEM Refs"));
    auto &types = layout.types.emplace_back();
    auto &offsets = layout.offsets.emplace_back();
    int64_t end = 0;
    for (const Obj &leaf : leaves) {
      auto type = llvm::cast<pk::RefType>(llvm::cast<AllocationObj>(*leaf).type);
      int64_t start = llvm::alignTo(end, alignment);
      end = start + (tmem ? pk::tmemColumns(type.getShape())
                          : type.getNumElements() * pk::elementBytes(type.getElementType()));
      types.push_back(type);
      offsets.push_back(start);
    }
    size = std::max(size, end);
  }
  mlir::MLIRContext *ctx = &el.context();
  auto space = pk::MemorySpaceAttr::get(ctx, u.space);
  layout.buffer = tmem ? pk::RefType::get({128, size}, mlir::IntegerType::get(ctx, 32), space)
                       : pk::RefType::get({size}, mlir::IntegerType::get(ctx, 8), space);
  return layout;
}

/// The groups of Refs of an allocated plgpu.RefUnion, as a tuple.
Obj unionRefs(Elaborator &el, const UnionLayout &layout, mlir::Value buffer, mlir::Location loc) {
  std::vector<Obj> groups;
  for (size_t g = 0; g < layout.groups.size(); ++g) {
    std::vector<Obj> refs;
    for (size_t i = 0; i < layout.types[g].size(); ++i)
      refs.push_back(refFor(
          pk::RefReinterpretOp::create(el.builder(), loc, layout.types[g][i], buffer,
                                       el.builder().getI64IntegerAttr(layout.offsets[g][i]))));
    size_t next = 0;
    groups.push_back(rebuild(layout.groups[g], refs, next));
  }
  return makeTuple(groups);
}

mlir::Type allocationType(Elaborator &el, const Obj &o) {
  if (auto *a = llvm::dyn_cast<AllocationObj>(o.get()))
    return a->type;
  if (auto *u = llvm::dyn_cast<RefUnionObj>(o.get()))
    return unionLayout(el, *u).buffer;
  auto &s = llvm::cast<ScratchShapeObj>(*o);
  return pk::RefType::get(s.shape, storageType(&el.context(), s.dtype),
                          pk::MemorySpaceAttr::get(&el.context(), s.space));
}


/// The shapes of an operand list for the op: static, or a diagnostic.
std::vector<int64_t> staticShape(Elaborator &el, const std::vector<Dim> &dims,
                                 const std::string &what, SourceRange r) {
  std::vector<int64_t> shape;
  for (const Dim &d : dims) {
    if (!d.isStatic())
      el.fail(r, what + " has the symbolic shape (" + el.describeDims(dims) +
                     "); Mosaic GPU kernels see whole arrays as Refs of static shape, so fix the "
                     "size with -D (e.g. -D " +
                     el.describeDims({d}) + "=1024)");
    shape.push_back(d.value);
  }
  return shape;
}

struct KernelOperand {
  mlir::Value value; ///< inputs only
  std::vector<int64_t> shape;
  DType dtype;
};

/// Builds a pk.mesh_kernel and elaborates `body(refs)` in it, where refs
/// are the GMEM Refs of the inputs then the outputs.
pk::MeshKernelOp
meshKernel(Elaborator &el, const std::shared_ptr<MeshObj> &mesh, const std::string &name,
           const std::vector<KernelOperand> &inputs, const std::vector<KernelOperand> &outputs,
           const std::vector<int64_t> &aliases, mlir::DictionaryAttr params, SourceRange r,
           const std::function<void(const std::vector<std::shared_ptr<RefObj>> &)> &body) {
  if (el.mode() != EmitMode::Export)
    el.fail(r, el.inKernel() ? "a Mosaic GPU kernel cannot be launched inside a kernel"
                             : "a Mosaic GPU kernel can only run inside an @export function");
  if (!el.activeVmaps().empty())
    el.fail(r, "jax.vmap over a Mosaic GPU kernel is not supported; add a grid axis instead");
  mlir::OpBuilder &b = el.builder();
  mlir::MLIRContext *ctx = &el.context();
  std::vector<mlir::Value> inputValues;
  std::vector<mlir::Type> resultTypes;
  for (const KernelOperand &o : inputs)
    inputValues.push_back(o.value);
  for (const KernelOperand &o : outputs)
    resultTypes.push_back(mlir::RankedTensorType::get(o.shape, storageType(ctx, o.dtype)));
  std::vector<llvm::StringRef> gridNames(mesh->gridNames.begin(), mesh->gridNames.end());
  std::vector<llvm::StringRef> clusterNames(mesh->clusterNames.begin(), mesh->clusterNames.end());
  auto op = pk::MeshKernelOp::create(
      b, el.loc(r), resultTypes, inputValues, b.getStringAttr(name),
      b.getDenseI64ArrayAttr(mesh->grid), b.getStrArrayAttr(gridNames),
      b.getDenseI64ArrayAttr(mesh->cluster), b.getStrArrayAttr(clusterNames),
      b.getI64IntegerAttr(mesh->numThreads),
      mesh->threadName.empty() ? nullptr : b.getStringAttr(mesh->threadName),
      b.getDenseI64ArrayAttr(aliases), params);
  std::vector<mlir::Type> refTypes;
  auto gmem = pk::MemorySpaceAttr::get(ctx, MemorySpace::GPUGlobal);
  for (const auto *list : {&inputs, &outputs})
    for (const KernelOperand &o : *list)
      refTypes.push_back(pk::RefType::get(o.shape, storageType(ctx, o.dtype), gmem));
  std::vector<mlir::Location> locs(refTypes.size(), el.loc(r));
  mlir::Block *block;
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    block = b.createBlock(&op.getBody(), {}, refTypes, locs);
  }
  std::vector<std::shared_ptr<RefObj>> refs;
  for (size_t i = 0; i < refTypes.size(); ++i) {
    const KernelOperand &o = i < inputs.size() ? inputs[i] : outputs[i - inputs.size()];
    refs.push_back(std::make_shared<RefObj>(block->getArgument(i), o.shape, o.dtype));
  }
  MeshInfo info{mesh};
  const MeshInfo *saved = el.activeMesh;
  el.activeMesh = &info;
  {
    Elaborator::ModeGuard mode(el, EmitMode::Kernel);
    b.setInsertionPointToEnd(block);
    body(refs);
    pk::ScopeYieldOp::create(b, el.loc(r));
  }
  el.activeMesh = saved;
  return op;
}

/// compiler_params as {gpu = {...}}.
mlir::DictionaryAttr kernelParams(Elaborator &el, const Obj &params, SourceRange r) {
  if (!params || isNone(params))
    return nullptr;
  auto *p = llvm::dyn_cast<CompilerParamsObj>(params.get());
  if (!p)
    el.fail(r, "compiler_params must be plgpu.CompilerParams(...), got " + typeName(*params));
  mlir::OpBuilder &b = el.builder();
  std::vector<mlir::NamedAttribute> entries;
  for (const auto &[k, v] : p->options) {
    if (auto i = el.staticInt(v))
      entries.push_back(b.getNamedAttr(k, b.getI64IntegerAttr(*i)));
    else if (auto *s = llvm::dyn_cast<StrObj>(v.get()))
      entries.push_back(b.getNamedAttr(k, b.getStringAttr(s->value)));
    else if (auto *seq = llvm::dyn_cast<SequenceObj>(v.get())) {
      std::vector<mlir::Attribute> items;
      for (const Obj &item : seq->items)
        items.push_back(b.getStringAttr(el.toStr(item, r, k.c_str())));
      entries.push_back(b.getNamedAttr(k, b.getArrayAttr(items)));
    }
  }
  return b.getDictionaryAttr({b.getNamedAttr("gpu", b.getDictionaryAttr(entries))});
}

/// Calls `f` with positional then keyword Refs, as plgpu.kernel calls its
/// body with the scratch Refs (a dict of scratch types names them).
Obj callWith(Elaborator &el, const Obj &f, const std::vector<Obj> &positional, const Obj &named,
             SourceRange r, const std::string &callee) {
  std::vector<std::pair<std::string, Obj>> keywords;
  if (named)
    for (const auto &[k, v] : llvm::cast<DictObj>(*named).entries)
      keywords.emplace_back(el.toStr(k, r, "scratch name"), v);
  return callAt(el, f, positional, keywords, r, callee);
}

} // namespace

//===----------------------------------------------------------------------===//
// Meshes and axes
//===----------------------------------------------------------------------===//

/// Warps of a Pallas thread (plgpu.WarpMesh's axis size).
constexpr int64_t kWarpsPerWarpgroup = 4;

std::optional<std::pair<unsigned, unsigned>> MeshInfo::find(const std::string &name) const {
  for (size_t i = 0; i < mesh->gridNames.size(); ++i)
    if (mesh->gridNames[i] == name)
      return std::make_pair(0u, static_cast<unsigned>(i));
  for (size_t i = 0; i < mesh->clusterNames.size(); ++i)
    if (mesh->clusterNames[i] == name)
      return std::make_pair(1u, static_cast<unsigned>(i));
  if (!mesh->threadName.empty() && mesh->threadName == name)
    return std::make_pair(2u, 0u);
  if (!warpAxis.empty() && warpAxis == name)
    return std::make_pair(3u, 0u);
  return std::nullopt;
}

int64_t MeshInfo::sizeOf(const std::pair<unsigned, unsigned> &axis) const {
  if (axis.first == 0)
    return mesh->grid[axis.second];
  if (axis.first == 1)
    return mesh->cluster[axis.second];
  if (axis.first == 3)
    return kWarpsPerWarpgroup;
  return mesh->numThreads;
}

namespace {

/// "line 12" of the first file position in `loc`, for messages.
std::string lineText(mlir::Location loc) {
  std::string text = "the warp body";
  loc->walk([&](mlir::Location inner) {
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(inner)) {
      text = "line " + std::to_string(file.getLine());
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return text;
}

} // namespace

Obj warpMap(Elaborator &el, const std::string &axisName, const Obj &body, bool passIndex,
            SourceRange r) {
  const MeshInfo &mesh = requireMesh(el, r, "pl.core_map(plgpu.WarpMesh(...))");
  if (!mesh.warpAxis.empty())
    el.fail(r, "core_maps over a plgpu.WarpMesh cannot be nested");
  mlir::OpBuilder &b = el.builder();
  auto op = pk::WarpMapOp::create(b, el.loc(r), axisName);
  mlir::Block &block = op.getBody().emplaceBlock();
  MeshInfo inner = mesh;
  inner.warpAxis = axisName;
  const MeshInfo *saved = el.activeMesh;
  el.activeMesh = &inner;
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&block);
    std::vector<Obj> positional;
    if (passIndex)
      positional.push_back(axisIndex(el, makeStr(axisName), r));
    callAt(el, body, positional, {}, r, "warp body");
  }
  el.activeMesh = saved;
  // Warp-level code works on scalars and Refs (as in Mosaic GPU): a
  // block value is spread over the whole warpgroup.
  op.getBody().walk([&](mlir::Operation *inside) {
    auto blockValue = [](mlir::Type t) {
      auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(t);
      return tensor && tensor.getRank() > 0;
    };
    if (llvm::any_of(inside->getOperandTypes(), blockValue) ||
        llvm::any_of(inside->getResultTypes(), blockValue))
      el.fail(r, "warp-level code (plgpu.WarpMesh) works on scalars and Refs, but this body "
                 "computes or uses an array (" +
                     lineText(inside->getLoc()) + "); load and store arrays outside it");
  });
  return none();
}

const MeshInfo &requireMesh(Elaborator &el, SourceRange r, const std::string &what) {
  if (!el.activeMesh)
    el.fail(r, what + " works inside a Mosaic GPU kernel (plgpu.kernel or pl.core_map)");
  return *el.activeMesh;
}

std::vector<std::string> axisNames(Elaborator &el, const Obj &o, SourceRange r, const char *what) {
  std::vector<std::string> names;
  if (!o || isNone(o))
    return names;
  if (llvm::isa<StrObj>(o.get()))
    return {llvm::cast<StrObj>(*o).value};
  for (const Obj &item : el.iterate(o, r))
    names.push_back(el.toStr(item, r, what));
  return names;
}

namespace {

std::pair<unsigned, unsigned> findAxis(Elaborator &el, const MeshInfo &mesh,
                                       const std::string &name, SourceRange r) {
  auto axis = mesh.find(name);
  if (!axis) {
    std::string known;
    auto add = [&](const std::string &n) { known += (known.empty() ? "'" : ", '") + n + "'"; };
    for (const std::string &n : mesh.mesh->gridNames)
      add(n);
    for (const std::string &n : mesh.mesh->clusterNames)
      add(n);
    if (!mesh.mesh->threadName.empty())
      add(mesh.mesh->threadName);
    el.fail(r, "'" + name + "' is not an axis of this kernel's mesh (its axes: " +
                   (known.empty() ? std::string("none") : known) + ")");
  }
  return *axis;
}

} // namespace

Obj axisIndex(Elaborator &el, const Obj &names, SourceRange r) {
  if (!el.activeMesh)
    el.fail(r, "lax.axis_index works inside a Mosaic GPU kernel (plgpu.kernel or pl.core_map) "
               "and, for the core axis, inside pl.kernel over a TPU TensorCore mesh "
               "(pltpu.create_tensorcore_mesh), and for a mesh's axes inside jax.shard_map "
               "(pkc compiles for one device: a mesh of one)");
  const MeshInfo &mesh = requireMesh(el, r, "lax.axis_index");
  std::vector<std::string> list = axisNames(el, names, r, "axis name");
  if (list.empty())
    el.fail(r, "lax.axis_index needs an axis name");
  Obj index;
  for (const std::string &name : list) {
    auto axis = findAxis(el, mesh, name, r);
    mlir::Value v =
        pk::AxisIndexOp::create(el.builder(), el.loc(r), el.builder().getI32Type(), name);
    Obj here = el.arrays().wrap(v, {}, DType::I32);
    // Several axes: the linear index, the first axis major.
    index = index ? binaryOperator(el, ast::BinaryOp::Add,
                                   binaryOperator(el, ast::BinaryOp::Mul, index,
                                                  makeInt(mesh.sizeOf(axis)), r),
                                   here, r)
                  : here;
  }
  return index;
}

int64_t axisSize(Elaborator &el, const Obj &names, SourceRange r) {
  const MeshInfo &mesh = requireMesh(el, r, "lax.axis_size");
  int64_t size = 1;
  for (const std::string &name : axisNames(el, names, r, "axis name"))
    size *= mesh.sizeOf(findAxis(el, mesh, name, r));
  return size;
}

Obj meshProgramId(Elaborator &el, int64_t axis, SourceRange r) {
  const MeshInfo &mesh = *el.activeMesh;
  int64_t rank = static_cast<int64_t>(mesh.mesh->grid.size());
  if (axis < 0 || axis >= rank)
    el.fail(r, "program_id axis " + std::to_string(axis) + " is out of range for a grid of rank " +
                   std::to_string(rank));
  return axisIndex(el, makeStr(mesh.mesh->gridNames[axis]), r);
}

Obj meshNumPrograms(Elaborator &el, int64_t axis, SourceRange r) {
  const MeshInfo &mesh = *el.activeMesh;
  int64_t rank = static_cast<int64_t>(mesh.mesh->grid.size());
  if (axis < 0 || axis >= rank)
    el.fail(r, "num_programs axis " + std::to_string(axis) +
                   " is out of range for a grid of rank " + std::to_string(rank));
  return makeInt(mesh.mesh->grid[axis]);
}

//===----------------------------------------------------------------------===//
// plgpu.kernel
//===----------------------------------------------------------------------===//

Obj applyKernelCall(Elaborator &el, const KernelCallObj &k, CallArgs &args) {
  SourceRange r = args.range;
  if (!args.keywords.empty())
    el.fail(args.rangeOfKeyword(args.keywords[0].first),
            "the inputs of a plgpu.kernel are positional, got keyword argument '" +
                args.keywords[0].first + "'");
  std::vector<KernelOperand> inputs, outputs;
  // Each input is a pytree of arrays, as in JAX: the kernel gets the same
  // structure of Refs (a None input, an empty pytree, is None: JAX's
  // hopper_matmul_mgpu.py passes c=None without a C term).
  for (size_t i = 0; i < args.positional.size(); ++i) {
    std::vector<Obj> leaves;
    pytreeLeaves(args.positional[i], leaves);
    for (const Obj &leaf : leaves) {
      auto *array = llvm::dyn_cast<GlobalArrayObj>(leaf.get());
      if (!array)
        el.fail(args.rangeOf(i),
                "plgpu.kernel inputs must be arrays (export parameters or results "
                "of other kernels), None, or tuples, lists and dicts of them; got " +
                    repr(*leaf));
      if (!array->batch.empty())
        el.fail(args.rangeOf(i), "jax.vmap over a Mosaic GPU kernel is not supported");
      inputs.push_back(
          {array->value,
           staticShape(el, array->shape,
                       "input " + std::to_string(inputs.size()) + " ('" + array->name + "')",
                       args.rangeOf(i)),
           array->dtype});
    }
  }
  // out_shape: one array type or a tuple / list of them (none: no outputs).
  // A None in the list is an empty pytree, as in JAX: no output there, and
  // None for its Ref and its result (`out_shape=[o, None]` when an
  // optional output is off).
  Obj out = k.outShape ? k.outShape : none();
  bool single = !isNone(out) && !llvm::isa<SequenceObj>(out.get());
  bool asList = !single && !isNone(out) && llvm::cast<SequenceObj>(*out).isList();
  std::vector<Obj> outTypes = isNone(out) ? std::vector<Obj>{}
                              : single    ? std::vector<Obj>{out}
                                          : llvm::cast<SequenceObj>(*out).items;
  std::vector<bool> absent;
  for (size_t i = 0; i < outTypes.size(); ++i) {
    absent.push_back(!single && isNone(outTypes[i]));
    if (absent.back())
      continue;
    std::vector<Dim> dims;
    DType dtype;
    if (auto *s = llvm::dyn_cast<ShapeDtypeStructObj>(outTypes[i].get())) {
      dims = s->shape;
      dtype = s->dtype;
    } else if (auto *g = llvm::dyn_cast<GlobalArrayObj>(outTypes[i].get())) {
      dims = g->shape;
      dtype = g->dtype;
    } else {
      el.fail(k.outShapeRange, "out_shape must be a jax.ShapeDtypeStruct (or an array, or a tuple "
                               "of them), got " +
                                   repr(*outTypes[i]));
    }
    std::string name = "output " + std::to_string(outputs.size());
    outputs.push_back({nullptr, staticShape(el, dims, name, k.outShapeRange), dtype});
    for (int64_t d : outputs.back().shape)
      if (d <= 0)
        el.fail(k.outShapeRange, name + " has a dimension of size " + std::to_string(d) +
                                     "; dimensions must be positive");
  }
  Obj scratch = k.scratch ? k.scratch : none();
  std::vector<std::string> collective;
  if (!k.mesh->threadName.empty())
    collective.push_back(k.mesh->threadName);
  pk::MeshKernelOp op = meshKernel(
      el, k.mesh, k.name, inputs, outputs, {}, kernelParams(el, k.compilerParams, k.range), k.range,
      [&](const std::vector<std::shared_ptr<RefObj>> &refs) {
        std::vector<Obj> positional;
        std::vector<Obj> inputRefs(refs.begin(),
                                   refs.begin() + static_cast<std::ptrdiff_t>(inputs.size()));
        size_t next = 0;
        for (const Obj &tree : args.positional)
          positional.push_back(pytreeRebuild(tree, inputRefs, next));
        for (bool none_ : absent)
          positional.push_back(none_ ? none() : Obj(refs[next++]));
        auto run = [&](const Obj &scratchRefs) {
          std::vector<Obj> all = positional;
          Obj named;
          if (auto *seq = llvm::dyn_cast<SequenceObj>(scratchRefs.get()))
            all.insert(all.end(), seq->items.begin(), seq->items.end());
          else if (llvm::isa<DictObj>(scratchRefs.get()))
            named = scratchRefs;
          else if (!isNone(scratchRefs))
            all.push_back(scratchRefs);
          Obj returned = callWith(el, k.body, all, named, r, k.name);
          if (!isNone(returned))
            el.fail(r, "a Mosaic GPU kernel must not return a value (it returned " +
                           repr(*returned) + "); write results to the output Refs");
          return none();
        };
        bool anyScratch = !isNone(scratch);
        if (auto *seq = llvm::dyn_cast<SequenceObj>(scratch.get()))
          anyScratch = !seq->items.empty();
        if (auto *d = llvm::dyn_cast<DictObj>(scratch.get()))
          anyScratch = !d->entries.empty();
        if (!anyScratch) {
          run(none());
          return;
        }
        std::vector<std::string> names;
        if (auto *d = llvm::dyn_cast<DictObj>(scratch.get()))
          for (const auto &[key, v] : d->entries)
            names.push_back(el.toStr(key, k.scratchRange, "scratch name"));
        // A single allocation (not in a list) is one Ref.
        Obj structure = isAllocation(scratch) ? makeTuple({scratch}) : scratch;
        scoped(el, structure, collective, k.scratchRange, run, names);
      });
  std::vector<Obj> results;
  for (size_t i = 0, o = 0; i < absent.size(); ++i) {
    if (absent[i]) {
      results.push_back(none());
      continue;
    }
    std::vector<Dim> dims;
    for (int64_t d : outputs[o].shape)
      dims.push_back(Dim{d, {}});
    results.push_back(std::make_shared<GlobalArrayObj>(op.getResult(o), dims, outputs[o].dtype,
                                                       k.name + " output " + std::to_string(o)));
    ++o;
  }
  if (single)
    return results[0];
  return asList ? makeList(results) : makeTuple(results);
}

//===----------------------------------------------------------------------===//
// pl.run_state and pl.core_map
//===----------------------------------------------------------------------===//

Obj runState(Elaborator &el, const Obj &f, const Obj &initial, SourceRange r) {
  auto call = [&](const Obj &refs) {
    CallArgs args;
    args.range = r;
    args.callee = "run_state body";
    args.addPositional(refs, r);
    return el.call(f, args);
  };
  if (el.inKernel()) {
    // In a kernel: accumulators initialized with ACC.init; the result is
    // their final value.
    std::vector<Obj> leaves;
    Tree tree = flattenWhere(
        el, initial,
        [](const Obj &o) {
          auto *a = llvm::dyn_cast<AllocationObj>(o.get());
          return a && a->initialValue;
        },
        leaves, r, "pl.run_state in a kernel takes plgpu.ACC.init(value) accumulators");
    std::vector<std::string> noAxes;
    return scoped(el, initial, noAxes, r, [&](const Obj &refs) {
      call(refs);
      std::vector<Obj> refLeaves, finals;
      flattenWhere(
          el, refs, [](const Obj &o) { return llvm::isa<RefObj>(o.get()); }, refLeaves, r,
          "internal error");
      for (const Obj &ref : refLeaves)
        finals.push_back(loadRef(el, llvm::cast<RefObj>(*ref), std::make_shared<EllipsisObj>(),
                                 nullptr, nullptr, r));
      size_t next = 0;
      return rebuild(tree, finals, next);
    });
  }
  if (el.mode() != EmitMode::Export)
    el.fail(r, "pl.run_state runs inside an @export function or a kernel");
  return runStateAtExport(el, f, initial, r);
}

Obj coreMap(Elaborator &el, const std::shared_ptr<MeshObj> &mesh, const Obj &body, SourceRange r) {
  std::vector<StateRef *> state = liveStateRefs(el);
  if (state.empty())
    el.fail(r, "pl.core_map runs on Refs made outside kernels (pl.run_state, jax.new_ref, "
               "jax.empty_ref), and none is alive here (or use plgpu.kernel, which passes its "
               "operands to the kernel)");
  std::vector<KernelOperand> operands;
  std::vector<int64_t> aliases;
  for (size_t i = 0; i < state.size(); ++i) {
    if (state[i]->space != MemorySpace::Any)
      el.fail(r, "a pl.core_map over a Mosaic GPU mesh runs on Refs in GMEM; a Ref made in "
                 "memory space '" +
                     pk::stringifyMemorySpace(state[i]->space).str() + "' is alive here");
    operands.push_back({state[i]->array->value, state[i]->ref->shape, state[i]->array->dtype});
    aliases.push_back(static_cast<int64_t>(i));
    aliases.push_back(static_cast<int64_t>(i));
  }
  std::string name = mesh->kernelName;
  if (name.empty())
    if (auto *f = llvm::dyn_cast<FunctionObj>(body.get()))
      name = f->name;
  if (name.empty())
    name = "core_map";
  pk::MeshKernelOp op = meshKernel(
      el, mesh, name, operands, operands, aliases, nullptr, r,
      [&](const std::vector<std::shared_ptr<RefObj>> &refs) {
        // The Refs are the kernel's outputs, which start with the inputs'
        // contents.
        std::vector<mlir::Value> memory;
        for (size_t i = 0; i < state.size(); ++i)
          memory.push_back(refs[state.size() + i]->value);
        withStateMemory(state, memory, [&] {
          CallArgs args;
          args.range = r;
          args.callee = name;
          if (!isNone(el.call(body, args)))
            el.fail(r, "a pl.core_map body must not return a value; write to the Refs instead");
        });
      });
  for (size_t i = 0; i < state.size(); ++i) {
    const GlobalArrayObj &old = *state[i]->array;
    state[i]->array =
        std::make_shared<GlobalArrayObj>(op.getResult(i), old.shape, old.dtype, old.name);
  }
  return none();
}

//===----------------------------------------------------------------------===//
// pl.run_scoped
//===----------------------------------------------------------------------===//

Obj scoped(Elaborator &el, const Obj &allocations, const std::vector<std::string> &collective,
           SourceRange r, const std::function<Obj(const Obj &)> &body,
           const std::vector<std::string> &argNames) {
  std::vector<Obj> leaves;
  Tree tree = flattenWhere(el, allocations, isAllocation, leaves, r,
                           "scratch must be allocations such as plgpu.SMEM((128,), jnp.float32), "
                           "plgpu.Barrier() or plgpu.ACC((64, 64), jnp.float32)");
  mlir::OpBuilder &b = el.builder();
  mlir::MLIRContext *ctx = &el.context();
  mlir::Location loc = el.loc(r);
  std::vector<mlir::Attribute> axes;
  for (const std::string &a : collective)
    axes.push_back(mlir::StringAttr::get(ctx, a));
  auto op = pk::RunScopedOp::create(b, loc, mlir::TypeRange{}, b.getArrayAttr(axes), nullptr);
  std::vector<mlir::Type> types;
  for (const Obj &leaf : leaves)
    types.push_back(allocationType(el, leaf));
  std::vector<mlir::Location> locs(types.size(), loc);
  mlir::Block *block;
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    block = b.createBlock(&op.getBody(), {}, types, locs);
  }
  if (!argNames.empty() && argNames.size() == types.size())
    op.setArgNamesAttr(
        b.getStrArrayAttr(std::vector<llvm::StringRef>(argNames.begin(), argNames.end())));
  std::vector<Obj> refs;
  Obj result;
  std::vector<Obj> resultLeaves;
  TreeDef resultDef;
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(block);
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (auto *u = llvm::dyn_cast<RefUnionObj>(leaves[i].get())) {
        refs.push_back(unionRefs(el, unionLayout(el, *u), block->getArgument(i), loc));
        continue;
      }
      refs.push_back(refFor(block->getArgument(i)));
      // plgpu.ACC.init(x): the accumulator starts with x.
      if (auto *a = llvm::dyn_cast<AllocationObj>(leaves[i].get()); a && a->initialValue) {
        storeRef(el, llvm::cast<RefObj>(*refs.back()), std::make_shared<EllipsisObj>(),
                 a->initialValue, nullptr, a->range);
      }
    }
    size_t next = 0;
    result = body(rebuild(tree, refs, next));
    resultDef = flatten(result, resultLeaves);
    std::vector<mlir::Value> yielded;
    for (Obj &leaf : resultLeaves) {
      ArrayPtr a = el.arrays().toArray(leaf, r);
      leaf = a;
      yielded.push_back(a->value);
    }
    pk::ScopeYieldOp::create(b, loc, yielded);
  }
  if (resultLeaves.empty())
    return result;
  // The results are known now: rebuild the op with them.
  std::vector<mlir::Type> resultTypes;
  for (const Obj &leaf : resultLeaves)
    resultTypes.push_back(llvm::cast<ArrayObj>(*leaf).value.getType());
  auto withResults = pk::RunScopedOp::create(b, loc, resultTypes, op.getCollectiveAxesAttr(),
                                             op.getArgNamesAttr());
  withResults.getBody().takeBody(op.getBody());
  op.erase();
  std::vector<Obj> outs;
  for (size_t i = 0; i < resultLeaves.size(); ++i) {
    auto &a = llvm::cast<ArrayObj>(*resultLeaves[i]);
    outs.push_back(el.arrays().wrap(withResults.getResult(i), a.shape, a.dtype, a.weak));
  }
  size_t next = 0;
  return unflatten(resultDef, outs, next);
}

Obj runScoped(Elaborator &el, CallArgs &args) {
  SourceRange r = args.range;
  if (args.positional.empty())
    el.fail(r, "pl.run_scoped needs the function to run");
  el.requireKernel(r, "pl.run_scoped");
  Obj f = args.positional[0];
  std::vector<Obj> positional(args.positional.begin() + 1, args.positional.end());
  auto named = std::make_shared<DictObj>();
  Obj collectiveObj = none();
  SourceRange collectiveRange = r;
  for (size_t i = 0; i < args.keywords.size(); ++i) {
    const auto &[k, v] = args.keywords[i];
    if (k == "collective_axes") {
      collectiveObj = v;
      collectiveRange = args.rangeOfKeyword(k);
    } else {
      named->entries.emplace_back(makeStr(k), v);
    }
  }
  std::vector<std::string> collective =
      axisNames(el, collectiveObj, collectiveRange, "collective axis");
  // Which allocations need what kind of scope.
  std::vector<Obj> leaves;
  Obj all = makeTuple({makeTuple(positional), named});
  flattenWhere(el, all, isAllocation, leaves, r,
               "pl.run_scoped allocates Refs such as plgpu.SMEM((128,), jnp.float32), "
               "plgpu.Barrier() or plgpu.ACC((64, 64), jnp.float32)");
  bool shared = false;
  for (const Obj &leaf : leaves) {
    auto *a = llvm::dyn_cast<AllocationObj>(leaf.get());
    if (a && a->initialValue)
      el.fail(a->range, "plgpu.ACC.init(...) initializes accumulators of pl.run_state; "
                        "pl.run_scoped allocates them zeroed with plgpu.ACC(shape, dtype)");
    if (!a || a->what != AllocationObj::What::Accumulator)
      shared = true;
  }
  if (const MeshInfo *mesh = el.activeMesh) {
    for (const std::string &name : collective) {
      auto axis = findAxis(el, *mesh, name, collectiveRange);
      if (axis.first != 2)
        el.fail(collectiveRange, "collective allocations across CTAs (axis '" + name +
                                     "') are not supported; a scope can be collective over the "
                                     "thread axis only");
    }
    const std::string &thread = mesh->mesh->threadName;
    bool threadCollective =
        std::find(collective.begin(), collective.end(), thread) != collective.end();
    if (shared && mesh->mesh->numThreads > 1 && !threadCollective)
      el.fail(r, "this kernel runs " + std::to_string(mesh->mesh->numThreads) +
                     " Pallas threads per CTA, and scratch is shared by them: allocate it with "
                     "collective_axes='" +
                     thread + "' (per-thread scratch is not supported)");
    // A scope of nothing may be collective (an emit_pipeline's
    // get_allocations() is empty: the pipeline allocates its own buffers).
    if (!shared && threadCollective && !leaves.empty())
      el.fail(collectiveRange, "wgmma accumulators (plgpu.ACC) live in each thread's registers "
                               "and cannot be collective");
  } else if (!collective.empty()) {
    el.fail(collectiveRange, "collective_axes names axes of a Mosaic GPU mesh; this kernel has "
                             "none");
  }
  return scoped(el, all, collective, r, [&](const Obj &refs) {
    auto &parts = llvm::cast<SequenceObj>(*refs).items;
    return callWith(el, f, llvm::cast<SequenceObj>(*parts[0]).items, parts[1], r,
                    "run_scoped body");
  });
}

} // namespace pk::elab

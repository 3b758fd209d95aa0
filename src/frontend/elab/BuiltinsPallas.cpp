//===- BuiltinsPallas.cpp - jax, pallas (pl, pltpu, plgpu), functools -----===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/StaticArray.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace pk::elab {

using ast::BinaryOp;

Obj semaphoreDType(pk::SemaphoreKind kind) {
  // JAX's semaphore dtypes are classes under pallas_core.semaphore_dtype;
  // kind 's' marks the family for jnp.issubdtype, and equal names are the
  // same dtype.
  switch (kind) {
  case pk::SemaphoreKind::Regular:
    return std::make_shared<ExtendedDTypeObj>("semaphore", 0, 's');
  case pk::SemaphoreKind::Barrier:
    return std::make_shared<ExtendedDTypeObj>("barrier_semaphore", 0, 's');
  case pk::SemaphoreKind::DMA:
    return std::make_shared<ExtendedDTypeObj>("dma_semaphore", 0, 's');
  }
  llvm_unreachable("a semaphore kind");
}

namespace {

ArrayPtr asArray(Elaborator &el, const Obj &o, SourceRange r) { return el.arrays().toArray(o, r); }

/// `pl.cdiv(a, b)`: ceiling division of ints, symbolic sizes or values.
Obj cdiv(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"a"}, {"b"}});
  const Obj &x = a[0], &y = a[1];
  std::optional<int64_t> sx = el.staticInt(x), sy = el.staticInt(y);
  if (sy && *sy == 0)
    el.fail(a.range(1), "pl.cdiv by zero");
  if (sx && sy) {
    int64_t q = *sx / *sy;
    if ((*sx % *sy != 0) && ((*sx < 0) == (*sy < 0)))
      ++q;
    return makeInt(q);
  }
  if (llvm::isa<SymIntObj>(x.get()) || llvm::isa<SymIntObj>(y.get())) {
    if ((sx || llvm::isa<SymIntObj>(x.get())) && (sy || llvm::isa<SymIntObj>(y.get()))) {
      mlir::AffineExpr ex = sx ? mlir::getAffineConstantExpr(*sx, &el.context())
                               : llvm::cast<SymIntObj>(*x).expr;
      mlir::AffineExpr ey = sy ? mlir::getAffineConstantExpr(*sy, &el.context())
                               : llvm::cast<SymIntObj>(*y).expr;
      // Affine division needs a positive divisor: ceil(a / -c) is
      // -floor(a / c). (A symbolic size is never negative.)
      if (sy && *sy < 0)
        return makeSymbolic(-ex.floorDiv(-*sy));
      return makeSymbolic(ex.ceilDiv(ey));
    }
  }
  el.requireKernel(args.range, "pl.cdiv of kernel values");
  // JAX: lax.div(a + (b - 1), b), which rounds toward zero.
  Obj sum =
      binaryOperator(el, BinaryOp::Add, x,
                     binaryOperator(el, BinaryOp::Sub, y, makeInt(1), args.range), args.range);
  CallArgs div;
  div.range = args.range;
  div.addPositional(sum, args.rangeOf(0));
  div.addPositional(y, args.rangeOf(1));
  return el.call(getAttribute(el, el.importModule("jax.lax", args.range), "div", args.range), div);
}

Obj blockSpec(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"block_shape", none()}, {"index_map", none()},
                               {"pipeline_mode", none()}, {"memory_space", none(), true},
                               {"indexing_mode", none(), true}});
  auto spec = std::make_shared<BlockSpecObj>();
  spec->range = args.range;
  Obj shape = a[0], map = a[1];
  // Older Pallas: BlockSpec(index_map, block_shape). Tell them apart by type.
  bool callableFirst = isCallable(shape);
  if (callableFirst) {
    std::swap(shape, map);
  }
  if (!isNone(shape) && !llvm::isa<SequenceObj>(shape.get()))
    el.fail(callableFirst ? a.range(1) : a.range(0),
            "block_shape must be a tuple (e.g. (128,) or (8, 128)), got " + typeName(*shape));
  if (!isNone(map) && !isCallable(map))
    el.fail(callableFirst ? a.range(0) : a.range(1),
            "index_map must be a function of the grid indices, got " + typeName(*map));
  spec->blockShape = shape;
  spec->indexMap = map;
  if (!isNone(a[2])) {
    auto *mode = llvm::dyn_cast<NamespaceObj>(a[2].get());
    if (!mode || mode->name != "pl.Buffered")
      el.fail(a.range(2), "pipeline_mode must be pl.Buffered(buffer_count), got " + repr(*a[2]));
    spec->bufferCount = llvm::cast<IntObj>(*mode->members.at("buffer_count")).value;
    spec->useLookahead = llvm::cast<BoolObj>(*mode->members.at("use_lookahead")).value;
    if (auto *revisit = llvm::dyn_cast<StrObj>(mode->members.at("revisit").get()))
      spec->revisit = revisit->value;
  }
  spec->indexingMode = a[4];
  if (!isNone(a[4]) && !llvm::isa<IndexingModeObj>(a[4].get()))
    el.fail(a.range(4), "indexing_mode must be pl.Blocked() or pl.Unblocked(...)");
  if (!isNone(a[3])) {
    el.checkNotOpaque(a[3], a.range(3)); // pltpu.SEMAPHORE says why
    auto *space = llvm::dyn_cast<MemorySpaceObj>(a[3].get());
    if (!space)
      el.fail(a.range(3), "memory_space must be a memory space such as pltpu.VMEM or pl.ANY");
    spec->memorySpace = space->space;
  }
  return spec;
}

/// pl.GridSpec(grid, in_specs, out_specs, scratch_shapes), and
/// pltpu.PrefetchScalarGridSpec(num_scalar_prefetch, grid, ...) when
/// `prefetch` is set.
Obj gridSpecWith(Elaborator &el, CallArgs &args, bool prefetch) {
  std::vector<Param> params{{"grid", makeTuple({})}, {"in_specs", none()}, {"out_specs", none()},
                            {"scratch_shapes", makeTuple({})}};
  if (prefetch)
    params.insert(params.begin(), Param{"num_scalar_prefetch"});
  BoundArgs a = el.bind(args, params);
  size_t at = prefetch ? 1 : 0;
  auto spec = std::make_shared<GridSpecObj>();
  if (prefetch) {
    spec->numScalarPrefetch = el.toInt(a[0], a.range(0), "num_scalar_prefetch");
    if (spec->numScalarPrefetch < 0)
      el.fail(a.range(0), "num_scalar_prefetch must not be negative");
  }
  spec->grid = a[at];
  spec->inSpecs = a[at + 1];
  spec->outSpecs = a[at + 2];
  spec->scratchShapes = a[at + 3];
  return spec;
}

Obj gridSpec(Elaborator &el, CallArgs &args) { return gridSpecWith(el, args, false); }

Obj pallasCall(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"kernel"}, {"out_shape"}, {"grid_spec", none(), true},
                               {"grid", makeTuple({}), true}, {"in_specs", none(), true},
                               {"out_specs", none(), true}, {"scratch_shapes", makeTuple({}), true},
                               {"input_output_aliases", std::make_shared<DictObj>(), true},
                               {"debug", makeBool(false), true}, {"interpret", makeBool(false), true},
                               {"name", none(), true}, {"compiler_params", none(), true},
                               {"cost_estimate", none(), true}, {"metadata", none(), true},
                               {"backend", none(), true}});
  auto call = std::make_shared<PallasCallableObj>();
  call->range = args.range;
  call->kernel = a[0];
  // Any callable: a def, a partial, what pltpu.emit_pipeline returns (a
  // kernel of the pallas_call's HBM Refs), an object with __call__.
  if (!isCallable(call->kernel) && !llvm::isa<CallableObj>(call->kernel.get()))
    el.fail(a.range(0), "pallas_call's first argument must be the kernel function, got " +
                            typeName(*call->kernel));
  call->outShape = a[1];
  // As JAX: a list of outputs comes back as a tuple (only the top level).
  if (auto *list = llvm::dyn_cast<SequenceObj>(a[1].get()); list && list->isList())
    call->outShape = makeTuple(list->items);
  call->grid = a[3];
  call->inSpecs = a[4];
  call->outSpecs = a[5];
  call->kernelRange = a.range(0);
  call->outShapeRange = a.range(1);
  call->gridRange = a.range(3);
  call->inSpecsRange = a.range(4);
  call->outSpecsRange = a.range(5);
  call->scratchRange = a.range(6);
  call->aliasesRange = a.range(7);
  call->scratchShapes = a[6];
  call->aliases = a[7];
  call->compilerParams = a[11];
  if (!isNone(a[12]) && !isCostEstimate(a[12]))
    el.fail(a.range(12), "cost_estimate must be a pl.CostEstimate(...), got " + typeName(*a[12]));
  call->costEstimate = a[12];
  if (!isNone(a[14])) {
    call->backend = el.toStr(a[14], a.range(14), "backend");
    if (call->backend != "triton" && call->backend != "mosaic_gpu" && call->backend != "mosaic_tpu")
      el.fail(a.range(14),
              "pallas_call's backend is 'triton', 'mosaic_gpu' or 'mosaic_tpu', got '" +
                  call->backend + "'");
  }
  if (!isNone(a[2])) {
    auto *gridSpec = llvm::dyn_cast<GridSpecObj>(a[2].get());
    if (!gridSpec)
      el.fail(a.range(2), "grid_spec must be a pl.GridSpec or a pltpu.PrefetchScalarGridSpec, got " +
                              typeName(*a[2]));
    call->grid = gridSpec->grid;
    call->numScalarPrefetch = gridSpec->numScalarPrefetch;
    call->inSpecs = gridSpec->inSpecs;
    call->outSpecs = gridSpec->outSpecs;
    call->gridRange = call->inSpecsRange = call->outSpecsRange = call->scratchRange = a.range(2);
    call->scratchShapes = gridSpec->scratchShapes;
  }
  if (!isNone(a[10]))
    call->name = el.toStr(a[10], a.range(10), "name");
  else if (auto *f = llvm::dyn_cast<FunctionObj>(call->kernel.get()))
    call->name = f->name;
  else if (auto *p = llvm::dyn_cast<PartialObj>(call->kernel.get());
           p && llvm::isa<FunctionObj>(p->function.get()))
    call->name = llvm::cast<FunctionObj>(*p->function).name;
  else if (auto *c = llvm::dyn_cast<CallableObj>(call->kernel.get()))
    call->name = c->name; // what pltpu.emit_pipeline returns: "pipeline", as in JAX
  else
    call->name = "kernel";
  return call;
}

Obj dynamicSlice(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"start"}, {"size", none()}, {"stride", none()}});
  Obj start = a[0], size = a[1];
  // As the builtin slice: pl.ds(None) is `:`, pl.ds(j) is `:j`.
  if (isNone(start))
    return std::make_shared<SliceObj>(none(), none(), none());
  if (isNone(size)) {
    size = start;
    start = makeInt(0);
  }
  int64_t stride = isNone(a[2]) ? 1 : el.toInt(a[2], a.range(2), "pl.ds stride");
  if (stride <= 0)
    el.fail(a.range(2), "pl.ds stride must be positive");
  if (!ArrayOps::isNumeric(start) || llvm::isa<FloatObj>(start.get()))
    el.fail(a.range(0), "pl.ds start must be an integer, got " + typeName(*start));
  // A traced size (`slices_smem[i, 1] - slices_smem[i, 0]`) is what index
  // maps of pl.BoundedSlice dimensions return; every other use of the
  // slice asks for a static one (staticDsSize).
  if (auto *traced = llvm::dyn_cast<ArrayObj>(size.get()); traced && !el.staticInt(size)) {
    if (traced->rank() != 0 || isFloat(traced->dtype) || traced->dtype == DType::Bool)
      el.fail(a.range(1), "pl.ds size must be an integer, got " + typeName(*size));
    if (stride != 1)
      el.fail(a.range(2), "a pl.ds with a traced size cannot be strided");
    return std::make_shared<DynamicSliceObj>(start, 0, stride, size);
  }
  int64_t n = el.toInt(size, a.range(1), "pl.ds size");
  if (n <= 0)
    el.fail(a.range(1), "pl.ds size must be positive, got " + std::to_string(n));
  return std::make_shared<DynamicSliceObj>(start, n, stride);
}


RefObj &refArgument(Elaborator &el, const Obj &o, SourceRange r, const char *what) {
  auto *ref = llvm::dyn_cast<RefObj>(o.get());
  if (!ref)
    el.fail(r, std::string(what) + " needs a Ref as its first argument, got " + typeName(*o));
  return *ref;
}

Obj load(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"x_ref_or_view"}, optionalParam("idx"), {"mask", none(), true},
                               {"other", none(), true}, {"cache_modifier", none(), true},
                               {"eviction_policy", none(), true}, {"volatile", none(), true}});
  RefObj &ref = refArgument(el, a[0], a.range(0), "pl.load");
  Obj index = a[1] ? a[1] : std::make_shared<EllipsisObj>();
  return loadRef(el, ref, index, a[2], a[3], args.range, /*padded=*/true);
}

Obj store(Elaborator &el, CallArgs &args) {
  if (args.positional.size() < 3 && std::none_of(args.keywords.begin(), args.keywords.end(),
                                                 [](auto &k) { return k.first == "val"; })) {
    // plgpu.store(ref, val, mask=...): the ref is already a view.
    BoundArgs a = el.bind(args, {{"x_ref_or_view"}, {"val"}, {"mask", none(), true},
                                 {"eviction_policy", none(), true}});
    storeRef(el, refArgument(el, a[0], a.range(0), "pl.store"),
             std::make_shared<EllipsisObj>(), a[1], a[2], args.range, /*padded=*/true);
    return none();
  }
  BoundArgs a = el.bind(args, {{"x_ref_or_view"}, {"idx"}, {"val"}, {"mask", none(), true},
                               {"eviction_policy", none(), true}});
  storeRef(el, refArgument(el, a[0], a.range(0), "pl.store"), a[1], a[2], a[3], args.range,
           /*padded=*/true);
  return none();
}

/// pl.atomic_add(x_ref, idx, val, *, mask=None) and its kin; the old values.
Obj atomicUpdate(Elaborator &el, CallArgs &args, const char *name, pk::AtomicKind kind) {
  BoundArgs a = el.bind(args, {{"x_ref_or_view"}, {"idx"}, {"val"}, {"mask", none(), true}});
  RefObj &ref = refArgument(el, a[0], a.range(0), name);
  // What Triton's atomics take (and Pallas checks).
  if (ref.dtype == DType::Bool || ref.dtype == DType::I8 || ref.dtype == DType::I16 ||
      ref.dtype == DType::U8 || ref.dtype == DType::U16 || ref.dtype == DType::BF16 ||
      (ref.dtype == DType::F16 && kind != pk::AtomicKind::Add))
    el.fail(a.range(0), std::string(name) + " does not support " + numpyName(ref.dtype) + " Refs");
  bool bitwise = kind == pk::AtomicKind::And || kind == pk::AtomicKind::Or || kind == pk::AtomicKind::Xor;
  if (bitwise && isFloat(ref.dtype))
    el.fail(a.range(0), std::string(name) + " needs an integer Ref, got " + numpyName(ref.dtype));
  if (isUnsigned(ref.dtype) && kind == pk::AtomicKind::Max)
    kind = pk::AtomicKind::MaxU;
  if (isUnsigned(ref.dtype) && kind == pk::AtomicKind::Min)
    kind = pk::AtomicKind::MinU;
  return atomicRef(el, ref, a[1], a[2], a[3], kind, args.range);
}

void defineAtomics(NamespaceObj &n) {
  const std::pair<const char *, pk::AtomicKind> atomics[] = {
      {"atomic_add", pk::AtomicKind::Add}, {"atomic_max", pk::AtomicKind::Max},
      {"atomic_min", pk::AtomicKind::Min}, {"atomic_xchg", pk::AtomicKind::Xchg},
      {"atomic_and", pk::AtomicKind::And}, {"atomic_or", pk::AtomicKind::Or},
      {"atomic_xor", pk::AtomicKind::Xor}};
  for (auto [name, kind] : atomics)
    define(n, name, [name = std::string("pl.") + name, kind = kind](Elaborator &el, CallArgs &args) {
      return atomicUpdate(el, args, name.c_str(), kind);
    });
  define(n, "atomic_cas", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ref"}, {"cmp"}, {"val"}});
    RefObj &ref = refArgument(el, a[0], a.range(0), "pl.atomic_cas");
    if (ref.dtype != DType::I32 && ref.dtype != DType::I64 && ref.dtype != DType::U32 &&
        ref.dtype != DType::U64 && ref.dtype != DType::F32 && ref.dtype != DType::F64)
      el.fail(a.range(0), std::string("pl.atomic_cas does not support ") + numpyName(ref.dtype) + " Refs");
    return atomicCompareSwap(el, ref, a[1], a[2], args.range);
  });
}

Obj pallasDot(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"a"}, {"b"}, {"trans_a", makeBool(false)}, {"trans_b", makeBool(false)},
                               {"allow_tf32", none()}, {"precision", none()}});
  ArrayPtr x = asArray(el, a[0], a.range(0));
  // Pallas's dot accumulates in i32 when the operands promote to an
  // integer type, in f64 for f64, and in f32 otherwise.
  DType promoted = promoteTypes(el.arrays().typeOf(x, a.range(0)),
                                el.arrays().typeOf(a[1], a.range(1))).dtype;
  DType accumulator = promoted == DType::F64 ? DType::F64 : isFloat(promoted) ? DType::F32 : DType::I32;
  // allow_tf32 is precision HIGH (True) or HIGHEST (False), as in Pallas.
  if (!isNone(a[4]) && !isNone(a[5]))
    el.fail(args.range, "pl.dot takes allow_tf32 or precision, not both");
  bool tf32 = isNone(a[4]) ? tf32Allowed(el, a[5], a.range(5)) : el.truthy(a[4], a.range(4));
  return el.arrays().dot(x, a[1], el.truthy(a[2], a.range(2)), el.truthy(a[3], a.range(3)),
                         accumulator, tf32, args.range);
}

Obj when(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"condition"}});
  Obj condition = a[0];
  SourceRange range = args.range;
  return std::make_shared<BuiltinObj>("pl.when(...)", [condition, range](Elaborator &el,
                                                                      CallArgs &inner) -> Obj {
    if (inner.positional.size() != 1)
      el.fail(inner.range, "pl.when(condition) decorates a function of no arguments");
    el.when(condition, inner.positional[0], range);
    return none();
  });
}

Obj loop(Elaborator &el, CallArgs &args) {
  // pl.loop(lower, upper, *, init_carry=None, step=1): calls the decorated
  // body at lower, lower + step, ... below upper, as JAX's helper does: a
  // fori_loop over cdiv(upper - lower, step) iterations whose index i
  // becomes lower + i * step. With init_carry the body takes and returns a
  // carry, and the decorated name binds to the final one.
  BoundArgs a = el.bind(args, {{"lower"}, {"upper"}, {"init_carry", none(), true},
                               {"step", makeInt(1), true}, {"unroll", none(), true}});
  std::optional<int64_t> step = el.staticInt(a[3]);
  // A constant array (`jnp.astype(3, jnp.int32)`) is as static.
  if (auto *array = llvm::dyn_cast<ArrayObj>(a[3].get()); !step && array && array->rank() == 0)
    if (auto constant = array->value.getDefiningOp<mlir::arith::ConstantOp>())
      if (auto value = llvm::dyn_cast<mlir::IntegerAttr>(constant.getValue()))
        step = value.getInt();
  if (!step || *step <= 0)
    el.fail(a.range(3), "pl.loop needs a static positive step");
  Obj lower = a[0], upper = a[1], init = a[2], unroll = a[4];
  int64_t stepValue = *step;
  SourceRange range = args.range;
  return std::make_shared<BuiltinObj>(
      "pl.loop(...)",
      [lower, upper, init, stepValue, unroll, range](Elaborator &el, CallArgs &inner) -> Obj {
        if (inner.positional.size() != 1)
          el.fail(inner.range, "pl.loop(lower, upper) decorates a function of the loop index");
        Obj body = inner.positional[0];
        bool carried = !isNone(init);
        auto adapter = std::make_shared<BuiltinObj>(
            "loop body", [body, lower, stepValue, carried](Elaborator &el, CallArgs &a) -> Obj {
              Obj index = a.positional[0];
              if (stepValue != 1)
                index = binaryOperator(el, BinaryOp::Mul, index, makeInt(stepValue), a.range);
              index = binaryOperator(el, BinaryOp::Add, lower, index, a.range);
              CallArgs call;
              call.range = a.range;
              call.addPositional(index, a.range);
              if (carried)
                call.addPositional(a.positional[1], a.range);
              Obj result = el.call(body, call);
              return carried ? result : a.positional[1];
            });
        // pl_utils.cdiv(upper - lower, step): lax.div(a + (step - 1), step),
        // truncating as lax.div does (the same for the counts that run).
        Obj count = binaryOperator(el, BinaryOp::Sub, upper, lower, range);
        if (stepValue != 1) {
          Obj rounded = binaryOperator(el, BinaryOp::Add, count, makeInt(stepValue - 1), range);
          count =
              llvm::isa<ArrayObj>(rounded.get())
                  ? truncatedDivision(el, /*remainder=*/false, rounded, makeInt(stepValue), range)
                  : binaryOperator(el, BinaryOp::FloorDiv, rounded, makeInt(stepValue), range);
        }
        Obj result =
            el.foriLoop(makeInt(0), count, adapter, carried ? init : makeTuple({}), range, unroll);
        return carried ? result : none();
      });
}

Obj compilerParams(const std::string &backend) {
  return std::make_shared<BuiltinObj>(backend + ".CompilerParams",
                                      [backend](Elaborator &el, CallArgs &args) -> Obj {
    if (!args.positional.empty())
      el.fail(args.range, "CompilerParams takes keyword arguments only");
    auto params = std::make_shared<CompilerParamsObj>(backend);
    params->options = args.keywords;
    return params;
  });
}

Obj memorySpace(MemorySpace space) { return std::make_shared<MemorySpaceObj>(space); }

/// A name of JAX's that pkc knows and does not support: calling it is an
/// error at that call saying so and why.
void defineRefused(NamespaceObj &n, const std::string &prefix, const char *name,
                   const std::string &why) {
  std::string full = prefix + "." + name;
  define(n, name, [full, why](Elaborator &el, CallArgs &args) -> Obj {
    el.fail(args.range, full + " is not supported: " + why);
  });
}

std::shared_ptr<NamespaceObj> makePallasNamespace(Elaborator &el) {
  auto ns = std::make_shared<NamespaceObj>("jax.experimental.pallas");
  NamespaceObj &n = *ns;
  define(n, "pallas_call", pallasCall);
  define(n, "BlockSpec", blockSpec);
  // pallas_call's default for in_specs / out_specs, and as one operand's
  // spec the whole array: what None means in both places.
  n.members["no_block_spec"] = none();
  define(n, "GridSpec", gridSpec);
  define(n, "program_id", programId);
  define(n, "num_programs", numPrograms);
  define(n, "cdiv", cdiv);
  // Row-major element strides of a static shape (Pallas's utils helper).
  define(n, "strides_from_shape", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"shape"}});
    std::vector<int64_t> shape = el.toShape(a[0], a.range(0), "shape");
    std::vector<Obj> strides(shape.size());
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      strides[d] = makeInt(stride);
      stride *= shape[d];
    }
    return makeTuple(strides);
  });
  defineRefused(n, "pl", "delay", "pkc has no cycle delays");
  // The semaphore dtypes (jnp.issubdtype(sem_ref.dtype, pl.semaphore));
  // semaphore_dtype and barrier_semaphore are jax._src.pallas.core's.
  n.members["semaphore"] = semaphoreDType(pk::SemaphoreKind::Regular);
  n.members["barrier_semaphore"] = semaphoreDType(pk::SemaphoreKind::Barrier);
  n.members["semaphore_dtype"] = std::make_shared<ExtendedDTypeObj>("semaphore_dtype", 0, 's');
  defineRefused(n, "pl", "MemoryRef",
                "pkc's memory spaces are the TPU's VMEM, SMEM, ANY and HBM (pltpu.VMEM(shape, "
                "dtype) makes scratch buffers) and the GPU's; host memory is not one");
  // Names for device_id= of remote signals and copies, which pkc refuses
  // by name where they are used (it compiles for one device).
  auto deviceIdType = std::make_shared<NamespaceObj>("pl.DeviceIdType");
  deviceIdType->members["MESH"] = makeStr("mesh");
  deviceIdType->members["LOGICAL"] = makeStr("logical");
  n.members["DeviceIdType"] = deviceIdType;
  define(n, "ds", dynamicSlice);
  n.members["dslice"] = n.members["ds"];
  // The class pl.ds returns: isinstance(s, pl.Slice), and its constructor.
  define(n, "Slice", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"start"}, {"size"}, {"stride", makeInt(1)}});
    CallArgs ds;
    ds.range = args.range;
    for (size_t i = 0; i < 3; ++i)
      ds.addPositional(a[i], a.range(i));
    return dynamicSlice(el, ds);
  });
  define(n, "load", load);
  define(n, "store", store);
  define(n, "dot", pallasDot);
  define(n, "when", when);
  define(n, "loop", loop);
  // Recorded for the TPU backend, which passes it on to tpu_custom_call as
  // Pallas does; the fields are ints, as Pallas requires.
  define(n, "CostEstimate", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"flops"}, {"transcendentals"}, {"bytes_accessed"},
                                 {"remote_bytes_transferred", makeInt(0)}});
    int64_t v[4];
    const char *names[] = {"flops", "transcendentals", "bytes_accessed", "remote_bytes_transferred"};
    for (int i = 0; i < 4; ++i)
      v[i] = el.toInt(a[i], a.range(i), names[i]);
    return makeCostEstimate(v[0], v[1], v[2], v[3]);
  });
  define(n, "estimate_cost", estimateCost);
  define(n, "multiple_of", [](Elaborator &el, CallArgs &args) -> Obj {
    return el.bind(args, {{"x"}, {"values"}})[0];
  });
  define(n, "max_contiguous", [](Elaborator &el, CallArgs &args) -> Obj {
    return el.bind(args, {{"x"}, {"values"}})[0];
  });
  define(n, "debug_print", [](Elaborator &el, CallArgs &args) -> Obj {
    return debugPrint(el, args, "pl.debug_print");
  });
  // As in JAX, pl.debug_check does nothing unless pl.enable_debug_checks
  // is set, which pkc does not support (refused by name).
  define(n, "debug_check", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"condition"}, {"message"}});
    if (!llvm::isa<StrObj>(a[1].get()))
      el.fail(a.range(1), "pl.debug_check's message must be a str, got " + typeName(*a[1]));
    return none();
  });
  define(n, "enable_debug_checks", [](Elaborator &el, CallArgs &args) -> Obj {
    el.fail(args.range, "pl.enable_debug_checks is not supported: pkc compiles pl.debug_check "
                        "as JAX runs it by default, as nothing");
  });
  define(n, "broadcast_to", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"shape"}});
    return el.arrays().broadcastTo(asArray(el, a[0], a.range(0)), el.toShape(a[1], a.range(1), "shape"), args.range);
  });
  define(n, "reciprocal", [](Elaborator &el, CallArgs &args) -> Obj {
    // full_range (Mosaic GPU) asks for accuracy over the whole float
    // range, which a division has.
    BoundArgs a = el.bind(
        args, {{"x"}, {"approx", makeBool(false), true}, {"full_range", makeBool(false), true}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0), toInexact(el.arrays().typeOf(a[0], a.range(0))));
    return binaryOperator(el, BinaryOp::Div, makeFloat(1.0), x, args.range);
  });
  define(n, "next_power_of_2", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    int64_t x = el.toInt(a[0], a.range(0), "x");
    int64_t p = 1;
    while (p < x)
      p <<= 1;
    return makeInt(p);
  });
  // pl.Buffered: a BlockSpec's pipeline_mode. Its buffer count changes how
  // a pipeline overlaps copies, never what a kernel computes.
  auto revisitMode = std::make_shared<NamespaceObj>("pl.RevisitMode");
  revisitMode->members["IMMEDIATE"] = makeStr("immediate");
  revisitMode->members["ANY"] = makeStr("any");
  n.members["RevisitMode"] = revisitMode;
  define(n, "Buffered", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"buffer_count"}, {"use_lookahead", makeBool(false)}, {"revisit", none()}});
    int64_t count = el.toInt(a[0], a.range(0), "buffer_count");
    if (count < 1)
      el.fail(a.range(0), "pl.Buffered needs at least one buffer, got " + std::to_string(count));
    if (!isNone(a[2]) && !llvm::isa<StrObj>(a[2].get()))
      el.fail(a.range(2), "revisit must be pl.RevisitMode.IMMEDIATE or pl.RevisitMode.ANY");
    auto mode = std::make_shared<NamespaceObj>("pl.Buffered");
    mode->members["buffer_count"] = makeInt(count);
    mode->members["use_lookahead"] = makeBool(el.truthy(a[1], a.range(1)));
    mode->members["revisit"] = a[2];
    return mode;
  });
  define(n, "Blocked", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"block_size", none()}});
    if (isNone(a[0]))
      return std::make_shared<IndexingModeObj>(false, std::vector<std::pair<int64_t, int64_t>>{});
    return std::make_shared<BlockDimObj>(BlockDimObj::Which::Blocked, el.toInt(a[0], a.range(0), "block size"));
  });
  define(n, "Unblocked", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"padding", none()}});
    std::vector<std::pair<int64_t, int64_t>> padding;
    if (!isNone(a[0]))
      for (const Obj &pair : el.iterate(a[0], a.range(0))) {
        std::vector<Obj> lohi = el.iterate(pair, a.range(0));
        if (lohi.size() != 2)
          el.fail(a.range(0), "padding must be a tuple of (low, high) pairs, one per axis");
        padding.emplace_back(el.toInt(lohi[0], a.range(0), "padding"), el.toInt(lohi[1], a.range(0), "padding"));
      }
    return std::make_shared<IndexingModeObj>(true, padding);
  });
  define(n, "Element", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"block_size"}, {"padding", makeTuple({makeInt(0), makeInt(0)})}});
    std::vector<Obj> lohi = el.iterate(a[1], a.range(1));
    if (lohi.size() != 2)
      el.fail(a.range(1), "pl.Element padding must be a (low, high) pair");
    return std::make_shared<BlockDimObj>(BlockDimObj::Which::Element,
                                         el.toInt(a[0], a.range(0), "block size"),
                                         el.toInt(lohi[0], a.range(1), "padding"),
                                         el.toInt(lohi[1], a.range(1), "padding"));
  });
  define(n, "Squeezed", [](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    return std::make_shared<BlockDimObj>(BlockDimObj::Which::Squeezed, 1);
  });
  n.members["squeezed"] = std::make_shared<BlockDimObj>(BlockDimObj::Which::Squeezed, 1);
  define(n, "BoundedSlice", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"block_size"}});
    return std::make_shared<BlockDimObj>(BlockDimObj::Which::BoundedSlice,
                                         el.toInt(a[0], a.range(0), "block size"));
  });
  n.members["ANY"] = memorySpace(MemorySpace::Any);
  // pl.MemorySpace, the backend-neutral enum: only ANY (the Ref stays in
  // HBM / global memory) is a space pkc places buffers in.
  auto spaces = std::make_shared<NamespaceObj>("pl.MemorySpace");
  spaces->members["ANY"] = n.members["ANY"];
  n.members["MemorySpace"] = spaces;
  defineAtomics(n);
  return ns;
}

std::shared_ptr<NamespaceObj> makePallasTpuNamespace(Elaborator &el) {
  auto ns = std::make_shared<NamespaceObj>("jax.experimental.pallas.tpu");
  NamespaceObj &n = *ns;
  defineRefused(n, "pltpu", "get_barrier_semaphore",
                "it synchronizes devices, and pkc compiles for one device");
  defineRefused(n, "pltpu", "CMEM",
                "pkc's TPU memory spaces are VMEM, SMEM, ANY and HBM (no core-shared CMEM)");
  for (const char *mxu : {"matmul_push_rhs", "matmul_acc_lhs", "matmul_pop"})
    defineRefused(
        n, "pltpu", mxu,
        "pkc does not drive the MXU's registers directly; use jnp.dot or lax.dot_general");
  defineRefused(n, "pltpu", "delay", "pkc has no cycle delays");
  n.members["dma_semaphore"] = semaphoreDType(pk::SemaphoreKind::DMA);
  // Semaphores as pallas_call operands (a DMA started in one kernel and
  // waited for in the next): named, so that using them says why not.
  n.members["SEMAPHORE"] = opaqueNamespace(
      "pltpu.SEMAPHORE", "semaphores as pallas_call inputs and outputs (memory_space="
                         "pltpu.SEMAPHORE) are not supported yet: a kernel's semaphores are its "
                         "scratch (pltpu.SemaphoreType in scratch_shapes), and its DMAs finish "
                         "before it ends");
  n.members["BufferedRef"] = opaqueNamespace(
      "pltpu.BufferedRef", "pltpu.BufferedRef (buffers made for pltpu.emit_pipeline's "
                           "allocations=) is not supported: pkc's pipeline allocates its own "
                           "buffers");
  n.members["semaphore"] = semaphoreDType(pk::SemaphoreKind::Regular); // deprecated there
  // The kinds of TPU core a mesh runs on; pkc's meshes are TensorCores.
  auto coreType = std::make_shared<NamespaceObj>("pltpu.CoreType");
  for (const auto &[name, value] : {std::pair{"TC", "tc"},
                                    {"SC_SCALAR_SUBCORE", "sc_scalar_subcore"},
                                    {"SC_VECTOR_SUBCORE", "sc_vector_subcore"}})
    coreType->members[name] = makeStr(value);
  n.members["CoreType"] = coreType;
  n.members["VMEM"] = memorySpace(MemorySpace::VMEM);
  n.members["SMEM"] = memorySpace(MemorySpace::SMEM);
  n.members["ANY"] = memorySpace(MemorySpace::Any);
  n.members["HBM"] = memorySpace(MemorySpace::HBM);
  auto spaces = std::make_shared<NamespaceObj>("pltpu.MemorySpace");
  for (const char *s : {"VMEM", "SMEM", "ANY", "HBM"})
    spaces->members[s] = n.members[s];
  spaces->members["SEMAPHORE"] = n.members["SEMAPHORE"];
  n.members["MemorySpace"] = spaces;
  n.members["TPUMemorySpace"] = spaces;
  // A placement hint on an operand of a later pallas_call; the value is
  // unchanged (pkc's operands stay in HBM until a BlockSpec moves them).
  define(n, "with_memory_space_constraint", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"memory_space"}});
    return a[0];
  });
  defineTpuInfo(n);
  defineTensorCoreMesh(n);
  n.members["CompilerParams"] = compilerParams("tpu");
  n.members["TPUCompilerParams"] = n.members["CompilerParams"];
  n.members["PARALLEL"] = makeStr("parallel");
  n.members["ARBITRARY"] = makeStr("arbitrary");
  n.members["CORE_PARALLEL"] = makeStr("core_parallel");
  auto semantics = std::make_shared<NamespaceObj>("pltpu.GridDimensionSemantics");
  semantics->members["PARALLEL"] = makeStr("parallel");
  semantics->members["ARBITRARY"] = makeStr("arbitrary");
  n.members["GridDimensionSemantics"] = semantics;
  define(n, "PrefetchScalarGridSpec",
         [](Elaborator &el, CallArgs &args) { return gridSpecWith(el, args, true); });
  // pltpu.load(ref, mask=) and pltpu.store(ref, val, mask=): pl.load and
  // pl.store of the whole Ref (or view).
  define(n, "load", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ref"}, {"mask", none(), true}});
    RefObj &ref = refArgument(el, a[0], a.range(0), "pltpu.load");
    return loadRef(el, ref, std::make_shared<EllipsisObj>(), a[1], none(), args.range,
                   /*padded=*/true);
  });
  define(n, "store", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ref"}, {"val"}, {"mask", none(), true}});
    storeRef(el, refArgument(el, a[0], a.range(0), "pltpu.store"), std::make_shared<EllipsisObj>(),
             a[1], a[2], args.range, /*padded=*/true);
    return none();
  });
  return ns;
}

std::shared_ptr<NamespaceObj> makePallasTritonNamespace(Elaborator &el, const std::string &name,
                                                        const std::shared_ptr<NamespaceObj> &pl) {
  auto ns = std::make_shared<NamespaceObj>(name);
  NamespaceObj &n = *ns;
  n.members["CompilerParams"] = compilerParams("gpu");
  n.members["TritonCompilerParams"] = n.members["CompilerParams"];
  for (const char *shared : {"load", "store", "dot"})
    n.members[shared] = pl->members[shared];
  for (const char *atomic : {"atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas",
                             "atomic_and", "atomic_or", "atomic_xor"})
    n.members[atomic] = pl->members[atomic];
  define(n, "approx_tanh", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    return el.arrays().floatUnary(FloatUnary::Tanh, a[0], args.range);
  });
  define(n, "debug_barrier", [](Elaborator &el, CallArgs &args) -> Obj { return none(); });
  // A hint to Triton that the first `values` elements are contiguous; pkc
  // derives contiguity itself (KnownBits), so the value passes through.
  define(n, "max_contiguous", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"values"}});
    for (const Obj &v : llvm::isa<SequenceObj>(a[1].get()) ? llvm::cast<SequenceObj>(*a[1]).items
                                                           : std::vector<Obj>{a[1]})
      el.toInt(v, a.range(1), "max_contiguous values");
    return a[0];
  });
  define(n, "elementwise_inline_asm", [](Elaborator &el, CallArgs &args) -> Obj {
    el.fail(args.range, "elementwise_inline_asm is not supported: pkc cannot check inline PTX, "
                        "and its interpreter, simulator and TPU backend cannot run it; write "
                        "the operation with jnp / lax");
  });
  return ns;
}

/// jax.dtypes, and JAX's internal jax._src.dtypes that kernels import for
/// `itemsize_bits` (hopper_mixed_type_matmul_mgpu.py): jnp's dtype queries
/// under the names JAX gives them there.
std::shared_ptr<NamespaceObj> makeJaxDtypes(const NamespaceObj &jnp, const std::string &name) {
  auto ns = std::make_shared<NamespaceObj>(name);
  for (const char *member : {"bfloat16", "issubdtype", "result_type", "finfo", "iinfo",
                             "promote_types"})
    if (auto it = jnp.members.find(member); it != jnp.members.end())
      ns->members[member] = it->second;
  define(*ns, "canonicalize_dtype", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"dtype"}, {"allow_extended_dtype", makeBool(false)}});
    return std::make_shared<DTypeObj>(el.toDType(a[0], a.range(0), "dtype"));
  });
  define(*ns, "itemsize_bits", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"dtype"}});
    return makeInt(bitWidth(el.toDType(a[0], a.range(0), "dtype")));
  });
  // JAX's defaults without x64 (JAX's tests size their inputs with them);
  // only the internal module has them.
  if (name == "jax._src.dtypes")
    for (auto [member, dtype] :
         {std::pair{"default_int_dtype", DType::I32}, std::pair{"default_uint_dtype", DType::U32},
          std::pair{"default_float_dtype", DType::F32}})
      define(*ns, member, [dtype](Elaborator &el, CallArgs &args) -> Obj {
        el.bind(args, {});
        return std::make_shared<DTypeObj>(dtype);
      });
  return ns;
}

std::shared_ptr<NamespaceObj> makeJaxNamespace(Elaborator &el, std::map<std::string, Obj> &modules) {
  auto ns = std::make_shared<NamespaceObj>("jax");
  NamespaceObj &n = *ns;
  n.members["numpy"] = modules["jax.numpy"];
  n.members["lax"] = modules["jax.lax"];
  n.members["nn"] = modules["jax.nn"];
  n.members["experimental"] = modules["jax.experimental"];
  n.members["scipy"] = modules["jax.scipy"];
  n.members["dtypes"] = modules["jax.dtypes"];
  // pkc compiles with the semantics of JAX 0.10.2 (its tests' reference):
  // programs that branch on the version take that branch.
  n.members["__version__"] = makeStr("0.10.2");
  n.members["__version_info__"] = makeTuple({makeInt(0), makeInt(10), makeInt(2)});
  defineJaxRefs(n);
  define(n, "ShapeDtypeStruct", [](Elaborator &el, CallArgs &args) -> Obj {
    // Sharding and manual-axis annotations describe placement across
    // devices, which a kernel's array type does not depend on.
    BoundArgs a = el.bind(args, {{"shape"},
                                 {"dtype"},
                                 {"sharding", none(), true},
                                 {"weak_type", none(), true},
                                 {"vma", none(), true},
                                 {"manual_axis_type", none(), true}});
    return std::make_shared<ShapeDtypeStructObj>(el.toDims(a[0], a.range(0), "shape"),
                                                 el.toDType(a[1], a.range(1), "dtype"));
  });
  define(n, "jit", [](Elaborator &el, CallArgs &args) -> Obj {
    // Compilation is what pkc does anyway: jit is the identity.
    if (args.positional.empty())
      el.fail(args.range, "jax.jit needs a function (use functools.partial(jax.jit, ...) to pass options)");
    return args.positional[0];
  });
  define(n, "vmap", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"fun"}, {"in_axes", makeInt(0)}, {"out_axes", makeInt(0)},
                                 {"axis_name", none()}, {"axis_size", none()},
                                 {"spmd_axis_name", none()}});
    Obj fun = a[0], inAxes = a[1], outAxes = a[2], axisSize = a[4];
    SourceRange at = args.range;
    return std::make_shared<BuiltinObj>("vmap", [=](Elaborator &el, CallArgs &inner) -> Obj {
      return el.applyVmap(fun, inAxes, outAxes, axisSize, at, inner);
    });
  });
  // Automatic differentiation: kernels' custom_vjp rules (fwd, bwd) are
  // ordinary functions an export can call; pkc does not differentiate.
  for (const char *name : {"grad", "value_and_grad", "vjp", "jvp", "linearize", "linear_transpose",
                           "jacfwd", "jacrev", "jacobian", "hessian"})
    defineRefused(n, "jax", name,
                  "pkc does not differentiate programs; call a custom_vjp's forward and backward "
                  "rules (the functions given to .defvjp) from the export instead");
  n.members["Array"] = std::make_shared<BuiltinObj>("jax.Array", [](Elaborator &el, CallArgs &args) -> Obj {
    el.fail(args.range, "jax.Array is a type, not a function");
  });
  // `from jax import Ref` for annotations (`def kernel(x_ref: Ref)`) and
  // isinstance; Refs are made by pallas_call and jax.new_ref, not by
  // calling the type.
  n.members["Ref"] =
      std::make_shared<BuiltinObj>("jax.Ref", [](Elaborator &el, CallArgs &args) -> Obj {
        el.fail(args.range, "jax.Ref is a type, not a function: kernels receive their Refs from "
                            "pallas_call, and jax.new_ref makes one");
      });
  llvm::cast<NamespaceObj>(*n.members.at("ref")).members["Ref"] = n.members["Ref"];
  auto debug = std::make_shared<NamespaceObj>("jax.debug");
  define(*debug, "print", [](Elaborator &el, CallArgs &args) -> Obj {
    return debugPrint(el, args, "jax.debug.print");
  });
  n.members["debug"] = debug;
  extendJaxNamespace(el, n);
  return ns;
}

} // namespace

namespace {

/// `axis` of the pltpu.emit_pipeline grid pl.program_id / num_programs
/// (`what`) answer from in a pipeline body.
size_t pipelineAxis(Elaborator &el, const Elaborator::PipelineGrid &pipeline, int64_t axis,
                    SourceRange r, const char *what) {
  if (axis < 0 || axis >= static_cast<int64_t>(pipeline.indices.size()))
    el.fail(r, std::string(what) + " axis " + std::to_string(axis) +
                   " is out of range for this pltpu.emit_pipeline's grid of rank " +
                   std::to_string(pipeline.indices.size()));
  return static_cast<size_t>(axis);
}

} // namespace

Obj programId(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"axis"}});
  int64_t axis = el.toInt(a[0], a.range(0), "program_id axis");
  el.requireKernel(args.range, "pl.program_id");
  if (const Elaborator::PipelineGrid *pipeline = el.activePipelineGrid)
    return pipeline->indices[pipelineAxis(el, *pipeline, axis, a.range(0), "program_id")];
  if (el.activeMesh) // plgpu.kernel: the grid is the mesh's
    return meshProgramId(el, axis, a.range(0));
  int64_t rank = static_cast<int64_t>(el.currentGrid().size());
  if (axis < 0 || axis >= rank)
    el.raise(a.range(0), "ValueError", // as JAX: code may catch it to count grid axes
             "program_id axis " + std::to_string(axis) + " is out of range for a grid of rank " +
                 std::to_string(rank));
  // Under jax.vmap the grid has leading axes the kernel does not see.
  uint64_t gridAxis = static_cast<uint64_t>(axis) + el.hiddenGridAxes();
  mlir::Value v = pk::ProgramIdOp::create(el.builder(), el.loc(args.range),
                                          el.builder().getI32Type(), gridAxis);
  return el.arrays().wrap(v, {}, DType::I32);
}

Obj gridAxisQuery(Elaborator &el, Obj (*query)(Elaborator &, CallArgs &), size_t axis,
                  SourceRange r) {
  CallArgs call;
  call.range = r;
  call.addPositional(makeInt(static_cast<int64_t>(axis)), r);
  return query(el, call);
}

Obj numPrograms(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"axis"}});
  int64_t axis = el.toInt(a[0], a.range(0), "num_programs axis");
  if (const Elaborator::PipelineGrid *pipeline = el.activePipelineGrid)
    return pipeline->extents[pipelineAxis(el, *pipeline, axis, a.range(0), "num_programs")];
  if (el.activeMesh)
    return meshNumPrograms(el, axis, a.range(0));
  int64_t rank = static_cast<int64_t>(el.currentGrid().size());
  if (axis < 0 || axis >= rank)
    el.raise(a.range(0), "ValueError", // as JAX: code may catch it to count grid axes
             "num_programs axis " + std::to_string(axis) + " is out of range for a grid of rank " +
                 std::to_string(rank));
  if (el.isDynamicGridAxis(static_cast<size_t>(axis))) {
    // Read from data: no symbolic size stands for it.
    if (!el.inKernel())
      el.fail(a.range(0), "num_programs of grid axis " + std::to_string(axis) +
                              ", whose size is computed from data, is only known in the kernel");
    mlir::Value v =
        pk::NumProgramsOp::create(el.builder(), el.loc(args.range), el.builder().getI32Type(),
                                  static_cast<uint64_t>(axis) + el.hiddenGridAxes());
    return el.arrays().wrap(v, {}, DType::I32);
  }
  return makeDim(el.currentGrid()[axis]);
}

std::map<std::string, Obj> makeModules(Elaborator &el) {
  std::map<std::string, Obj> m;
  auto jnp = makeNumpyNamespace(el, "jax.numpy");
  m["jax.numpy"] = jnp;
  m["numpy"] = makeNumpyNamespace(el, "numpy");
  addExtendedDTypes(*jnp);
  addExtendedDTypes(llvm::cast<NamespaceObj>(*m["numpy"]));
  static_numpy::defineFunctions(llvm::cast<NamespaceObj>(*m["numpy"]));
  m["jax.lax"] = makeLaxNamespace(el);
  defineArrayFunctions(el, *jnp, llvm::cast<NamespaceObj>(*m["jax.lax"]));
  defineSortFunctions(*jnp, llvm::cast<NamespaceObj>(*m["jax.lax"]));
  defineAliases(el, *jnp, llvm::cast<NamespaceObj>(*m["jax.lax"]));
  defineLaxPrimitives(llvm::cast<NamespaceObj>(*m["jax.lax"]));
  auto nn = makeNnNamespace(el);
  nn->members["logsumexp"] = jnp->members["logsumexp"];
  m["jax.nn"] = nn;
  auto special = std::make_shared<NamespaceObj>("jax.scipy.special");
  special->members["erf"] = jnp->members["erf"];
  special->members["erfc"] = jnp->members["erfc"];
  special->members["logsumexp"] = jnp->members["logsumexp"];
  special->members["erfinv"] = llvm::cast<NamespaceObj>(*m["jax.lax"]).members["erf_inv"];
  m["jax.scipy.special"] = special;
  auto scipy = std::make_shared<NamespaceObj>("jax.scipy");
  scipy->members["special"] = special;
  m["jax.scipy"] = scipy;

  auto pl = makePallasNamespace(el);
  // pl.empty is lax.empty; pl.empty_like maps it over a tree.
  pl->members["empty"] = llvm::cast<NamespaceObj>(*m["jax.lax"]).members.at("empty");
  pl->members["empty_like"] = llvm::cast<NamespaceObj>(*m["jax.lax"]).members.at("empty_like");
  // pl.empty_ref_like(pltpu.SMEM((8,), jnp.int32)) or (a ShapeDtypeStruct)
  // is jax.empty_ref of its shape and dtype, in its memory space (pl.ANY).
  define(*pl, "empty_ref_like", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    Obj type = a[0], space;
    if (auto *s = llvm::dyn_cast<ScratchShapeObj>(a[0].get())) {
      std::vector<Dim> dims;
      for (int64_t d : s->shape)
        dims.push_back(Dim{d, {}});
      type = std::make_shared<ShapeDtypeStructObj>(dims, s->dtype);
      space = std::make_shared<MemorySpaceObj>(s->space);
    } else if (llvm::isa<ShapeDtypeStructObj>(a[0].get())) {
      space = std::make_shared<MemorySpaceObj>(MemorySpace::Any);
    } else if (auto *alloc = llvm::dyn_cast<AllocationObj>(a[0].get());
               alloc && alloc->what == AllocationObj::What::Semaphore) {
      el.fail(a.range(0), "semaphores made outside kernels (pl.empty_ref_like of a semaphore "
                          "type) are not supported yet: allocate them in the kernel "
                          "(pl.run_scoped, scratch_shapes)");
    } else {
      el.raise(a.range(0), "ValueError",
               "empty_ref_like does not support " + typeName(*a[0]) +
                   " (it takes a memory space's shape, such as pltpu.VMEM((8, 128), "
                   "jnp.float32), or a jax.ShapeDtypeStruct)");
    }
    CallArgs ref;
    ref.range = args.range;
    ref.addPositional(type, a.range(0));
    ref.keywords.emplace_back("memory_space", space);
    ref.keywordRanges.push_back(a.range(0));
    return el.call(getAttribute(el, el.importModule("jax", args.range), "empty_ref", args.range),
                   ref);
  });
  auto tpu = makePallasTpuNamespace(el);
  defineTpuArrayFunctions(el, *tpu);
  auto triton = makePallasTritonNamespace(el, "jax.experimental.pallas.triton", pl);
  auto gpu = makePallasTritonNamespace(el, "jax.experimental.pallas.gpu", pl);
  auto mosaicGpu = makeMosaicGpuNamespace(el, *pl, llvm::cast<NamespaceObj>(*m["jax.lax"]));
  defineTpuMemory(el, *tpu, *pl); // after pl's semaphore ops, which pltpu aliases
  pl->members["tpu"] = tpu;
  pl->members["triton"] = triton;
  pl->members["gpu"] = gpu;
  pl->members["mosaic_gpu"] = mosaicGpu;
  // SparseCore kernels: a module TPU test files import beside pltpu;
  // importing it is fine, using it is an error at that use.
  auto sparseCore = opaqueNamespace(
      "jax.experimental.pallas.tpu_sc",
      "SparseCore kernels (jax.experimental.pallas.tpu_sc) are not supported: pkc compiles "
      "kernels for the TensorCore");
  pl->members["tpu_sc"] = sparseCore;
  m["jax.experimental.pallas.tpu_sc"] = sparseCore;
  m["jax.experimental.pallas"] = pl;
  m["jax.experimental.pallas.tpu"] = tpu;
  m["jax.experimental.pallas.triton"] = triton;
  m["jax.experimental.pallas.gpu"] = gpu;
  m["jax.experimental.pallas.mosaic_gpu"] = mosaicGpu;
  auto experimental = std::make_shared<NamespaceObj>("jax.experimental");
  experimental->members["pallas"] = pl;
  auto checkify = makeCheckifyNamespace();
  experimental->members["checkify"] = checkify;
  m["jax.experimental.checkify"] = checkify;
  // Multi-process helpers that JAX's collective kernels import for their
  // benchmarks: importing is fine, using them is an error at that use.
  auto multihost = std::make_shared<NamespaceObj>("jax.experimental.multihost_utils");
  multihost->opaque = true;
  multihost->why = "jax.experimental.multihost_utils runs across host processes at run time, "
                   "outside the kernels pkc compiles";
  experimental->members["multihost_utils"] = multihost;
  m["jax.experimental.multihost_utils"] = multihost;
  m["jax.experimental"] = experimental;
  // jax._src.lib.cuda_versions: JAX's kernels ask for the CUDA runtime's
  // version to steer around toolkit bugs (attention_mgpu.py refuses causal
  // masking on 12.8 to 12.9.0). pkc compiles ahead of time, for the CUDA 13
  // driver ABI and ptxas, so that is the version it answers.
  auto cudaVersions = std::make_shared<NamespaceObj>("jax._src.lib.cuda_versions");
  for (const char *name : {"cuda_runtime_get_version", "cuda_driver_get_version"})
    define(*cudaVersions, name, [](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {});
      return makeInt(13000);
    });
  auto jaxLib = std::make_shared<NamespaceObj>("jax._src.lib");
  jaxLib->members["cuda_versions"] = cudaVersions;
  m["jax._src.lib"] = jaxLib;
  m["jax._src.lib.cuda_versions"] = cudaVersions;
  // jax._src.cudnn's check_compute_capability("9.0"): whether the device
  // is a CUDA GPU of at least that compute capability (axlearn sizes its
  // grids by it). Known only when compiling for one kind of device.
  auto fusedAttention = std::make_shared<NamespaceObj>("jax._src.cudnn.fused_attention_stablehlo");
  define(*fusedAttention, "check_compute_capability", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"capability"}});
    std::string wanted = el.toStr(a[0], a.range(0), "capability");
    const std::string &kind = el.deviceKind();
    if (kind.empty())
      el.raise(args.range, "RuntimeError",
               "check_compute_capability is answered only when the compilation is for one kind "
               "of device: CUDA targets, one TPU generation (--target=tpu:v6e, ...) or the "
               "interpreter");
    std::string current = computeCapabilityOfDevice(kind);
    if (current.empty())
      return makeBool(false); // not a CUDA GPU
    return makeBool(computeCapabilityParts(el, current, a.range(0)) >=
                    computeCapabilityParts(el, wanted, a.range(0)));
  });
  m["jax._src.cudnn.fused_attention_stablehlo"] = fusedAttention;
  // Where pltpu's helpers live in JAX; real kernels import them from there.
  auto helpers = std::make_shared<NamespaceObj>("jax._src.pallas.mosaic.helpers");
  for (const char *name : {"sync_copy", "core_barrier", "run_on_first_core"})
    helpers->members[name] = tpu->members.at(name);
  m["jax._src.pallas.mosaic.helpers"] = helpers;
  addInternalPallasModules(m, pl, tpu, mosaicGpu);
  defineInterpretModes(*tpu, m);
  auto prng = makeJaxPrngNamespace();
  auto threefry = makeJaxThreefryNamespace(prng);
  auto random = std::make_shared<NamespaceObj>("jax._src.random");
  random->members["prng"] = prng;
  random->members["threefry2x32"] = threefry;
  m["jax._src.random"] = random;
  m["jax._src.random.prng"] = prng;
  m["jax._src.random.threefry2x32"] = threefry;
  m["jax.dtypes"] = makeJaxDtypes(llvm::cast<NamespaceObj>(*m["jax.numpy"]), "jax.dtypes");
  m["jax._src.dtypes"] = makeJaxDtypes(llvm::cast<NamespaceObj>(*m["jax.numpy"]), "jax._src.dtypes");
  m["jax"] = makeJaxNamespace(el, m);
  auto &jax = llvm::cast<NamespaceObj>(*m["jax"]);
  defineSharding(el, jax, llvm::cast<NamespaceObj>(*m["jax.lax"]));
  m["jax.experimental.shard_map"] = experimental->members["shard_map"];
  m["jax.extend"] = jax.members["extend"];
  m["jax.extend.backend"] = llvm::cast<NamespaceObj>(*jax.members["extend"]).members["backend"];
  m["jax.lib"] = jax.members["lib"];
  m["jax.lib.xla_bridge"] = llvm::cast<NamespaceObj>(*jax.members["lib"]).members["xla_bridge"];
  m["jax.sharding"] = jax.members["sharding"];
  m["jax.ad_checkpoint"] = jax.members["ad_checkpoint"];
  m["jax.typing"] = jax.members["typing"];
  m["jax.custom_batching"] = jax.members["custom_batching"];
  m["jax._src.test_util"] = makeTestUtilNamespace(el, jax.members["default_backend"]);

  auto functools = std::make_shared<NamespaceObj>("functools");
  define(*functools, "partial", [](Elaborator &el, CallArgs &args) -> Obj {
    if (args.positional.empty())
      el.fail(args.range, "partial() needs a function");
    auto p = std::make_shared<PartialObj>();
    p->function = args.positional[0];
    p->args.assign(args.positional.begin() + 1, args.positional.end());
    p->kwargs = args.keywords;
    return p;
  });
  define(*functools, "reduce", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"function"}, {"iterable"}, optionalParam("initial")});
    std::vector<Obj> items = el.iterate(a[1], a.range(1));
    Obj acc = a[2];
    size_t start = 0;
    if (!acc) {
      if (items.empty())
        el.fail(args.range, "reduce() of empty iterable with no initial value");
      acc = items[0];
      start = 1;
    }
    for (size_t i = start; i < items.size(); ++i) {
      CallArgs call;
      call.range = args.range;
      call.addPositional(acc, args.range);
      call.addPositional(items[i], args.range);
      acc = el.call(a[0], call);
    }
    return acc;
  });
  m["functools"] = functools;
  m["math"] = makeMathNamespace(el);
  addStdlibModules(el, m);
  addMlirBindingModules(m);
  return m;
}

namespace {

/// pallas_primitives.swap(x_ref, idx, val, mask=None): stores `val` and
/// returns what was there (a masked load, then a masked store); where the
/// mask is off, as JAX's, the result is `val`.
Obj swapPrimitive(const NamespaceObj &pl, Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"x_ref_or_view"}, {"idx"}, {"val"}, {"mask", none()}});
  auto call = [&](const char *name, std::vector<Obj> values) {
    CallArgs c;
    c.range = args.range;
    for (size_t i = 0; i < values.size(); ++i)
      c.addPositional(values[i], a.range(i));
    if (!isNone(a[3])) {
      c.keywords.emplace_back("mask", a[3]);
      c.keywordRanges.push_back(a.range(3));
    }
    return el.call(pl.members.at(name), c);
  };
  Obj old = call("load", {a[0], a[1]});
  call("store", {a[0], a[1], a[2]});
  if (isNone(a[3]))
    return old;
  return el.arrays().where(a[3], old, a[2], args.range);
}

} // namespace

void addInternalPallasModules(std::map<std::string, Obj> &m,
                              const std::shared_ptr<NamespaceObj> &pl,
                              const std::shared_ptr<NamespaceObj> &tpu,
                              const std::shared_ptr<NamespaceObj> &mosaicGpu) {
  // JAX's own modules behind the public names: JAX's tests and some
  // kernels import from there (`from jax._src.pallas.mosaic_gpu import
  // pipeline as mgpu_pipeline`). Each stands for the public namespace
  // that exports its names.
  for (const char *name : {"core", "pipeline", "primitives", "helpers"})
    m[std::string("jax._src.pallas.mosaic_gpu.") + name] = mosaicGpu;
  for (const char *name : {"core", "primitives", "pipeline"})
    m[std::string("jax._src.pallas.mosaic.") + name] = tpu;
  m["jax._src.pallas.core"] = pl;
  m["jax._src.pallas.helpers"] = pl;
  m["jax._src.pallas.pallas_call"] = pl;
  auto primitives = std::make_shared<NamespaceObj>(*pl);
  primitives->name = "jax._src.pallas.primitives";
  std::weak_ptr<NamespaceObj> plWeak = pl;
  define(*primitives, "swap", [plWeak](Elaborator &el, CallArgs &args) -> Obj {
    return swapPrimitive(*plWeak.lock(), el, args);
  });
  m["jax._src.pallas.primitives"] = primitives;
  // pl.run_state is JAX's state discharge's run_state (the rest of
  // jax._src.state stays opaque).
  auto discharge = std::make_shared<NamespaceObj>("jax._src.state.discharge");
  discharge->members["run_state"] = pl->members.at("run_state");
  m["jax._src.state.discharge"] = discharge;
}

int64_t staticDsSize(Elaborator &el, const DynamicSliceObj &ds, SourceRange r) {
  if (ds.dynamicSize)
    el.fail(r, "this pl.ds has a traced size; pkc takes one only in a Ref view that an async "
               "copy moves (pltpu.make_async_copy(x_ref.at[pl.ds(s, n)], ...)) and as the index "
               "of a pl.BoundedSlice block dimension (in pltpu.emit_pipeline); elsewhere the "
               "size must be static");
  return ds.size;
}

} // namespace pk::elab

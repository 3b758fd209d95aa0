//===- MosaicGpuInline.cpp - plgpu.inline_mgpu: named barriers and fences -===//
//
// plgpu.inline_mgpu(arg_types=, return_type=)(f) runs f(ctx, *args) while
// Mosaic GPU lowers the kernel, with JAX's MLIR Python bindings: f may
// build any IR, which pkc cannot follow in general. Real kernels use it for
// what Pallas does not expose: tokamax's Hopper attention synchronizes its
// warpgroups and its TMA warp with hardware named barriers
// (llvm.inline_asm "bar.sync id, n" / "bar.arrive id, n", the id a traced
// scalar), and that warp fences its shared-memory writes before its TMA
// copies (nvvm.fence_proxy). pkc runs f's Python as it runs any other,
// with binding modules (jaxlib.mlir.ir, jaxlib.mlir.dialects.llvm / nvvm,
// and their jax._src.lib.mlir spellings) that have exactly those builders,
// each a pk op the interpreter, the simulator and the CUDA backend model:
//
//   llvm.inline_asm("bar.sync 4, 256;") ... -> pk.named_barrier
//     (bar.sync / bar.arrive, barrier[.cta].sync / .arrive [.aligned])
//   llvm.inline_asm("fence.proxy.async.shared::cta;"),
//   nvvm.fence_proxy(ProxyKind.async_shared, space=SharedSpace.shared_cta)
//                                        -> pk.fence_async_shared
//
// Arguments are scalars (arg_types plgpu.Layout.WG_SPLAT), which f sees as
// Mosaic GPU's FragmentedArray shows them: x.registers[()] (or
// x.registers.item()) is the value. Everything else of the bindings
// (FragmentedArray arithmetic, Ref arguments, return values, other
// dialects, other PTX) is refused by name at the line that uses it.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/MosaicGpu.h"

#include "ir/MosaicGpuRules.h"
#include "ir/PkDialect.h"

#include "support/ShapeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/ADT/StringExtras.h"

namespace pk::elab {

namespace {

const char *kBindingsWhy =
    "pkc models JAX's MLIR Python bindings only as far as plgpu.inline_mgpu bodies use them "
    "for hardware named barriers (llvm.inline_asm of bar.sync / bar.arrive) and proxy fences "
    "(nvvm.fence_proxy, fence.proxy.async.shared::cta); see docs/mosaic-gpu.md";

/// How deep the elaboration is in inline_mgpu bodies: the bindings' builders
/// emit ops only there (one elaboration runs on one OS thread).
thread_local int inlineDepth = 0;

void requireInlineBody(Elaborator &el, SourceRange r, const std::string &what) {
  if (inlineDepth == 0)
    el.fail(r, what + " builds Mosaic GPU IR: pkc runs it only inside a plgpu.inline_mgpu body");
}

std::shared_ptr<NamespaceObj> bindingsModule(const std::string &name) {
  auto ns = std::make_shared<NamespaceObj>(name);
  ns->opaque = true;
  ns->why = kBindingsWhy;
  return ns;
}

/// An enum of the bindings whose members are their own names.
std::shared_ptr<NamespaceObj> enumNamespace(const std::string &name,
                                            std::initializer_list<const char *> members) {
  auto ns = bindingsModule(name);
  for (const char *m : members)
    ns->members[m] = makeStr(name + "." + m);
  return ns;
}

std::string enumName(const Obj &o) {
  auto *s = llvm::dyn_cast<StrObj>(o.get());
  return s ? s->value : std::string();
}

/// ir.Type.parse(text): a type, known by its text.
Obj parseType(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"asm"}, {"context", none(), true}});
  std::string text = el.toStr(a[0], a.range(0), "the type");
  auto type = std::make_shared<CallableObj>("ir.Type(" + text + ")",
                                            [](Elaborator &el, CallArgs &args) -> Obj {
                                              el.fail(args.range, "an MLIR type is not callable");
                                            });
  type->members["__mlir_type__"] = makeStr(text);
  return type;
}

/// The value of an inline_mgpu argument, as a FragmentedArray of one
/// register shows it: `.registers[()]` and `.registers.item()`.
Obj fragmentedScalar(const Obj &value) {
  auto registers = std::make_shared<CallableObj>(
      "FragmentedArray.registers", [](Elaborator &el, CallArgs &args) -> Obj {
        el.fail(args.range, "'registers' is not callable");
      });
  registers->members["__getitem__"] =
      builtin("registers.__getitem__", [value](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"index"}});
        auto *index = llvm::dyn_cast<SequenceObj>(a[0].get());
        if (!index || !index->items.empty())
          el.fail(a.range(0),
                  "the registers of a scalar argument (plgpu.Layout.WG_SPLAT) are indexed "
                  "with (), the only register");
        return value;
      });
  registers->members["item"] =
      builtin("registers.item", [value](Elaborator &el, CallArgs &args) -> Obj {
        el.bind(args, {});
        return value;
      });
  auto array = std::make_shared<CallableObj>(
      "mgpu.FragmentedArray", [](Elaborator &el, CallArgs &args) -> Obj {
        el.fail(args.range, "a FragmentedArray is not callable");
      });
  array->members["registers"] = registers;
  array->members["shape"] = makeTuple({}); // a scalar's; the rest is Mosaic GPU's
  return array;
}

mlir::Value i32Constant(Elaborator &el, int64_t v, SourceRange r) {
  return mlir::arith::ConstantIntOp::create(el.builder(), el.loc(r), el.builder().getI32Type(), v);
}

/// One operand of a PTX statement: an integer or `$k`, the k-th operand.
mlir::Value asmOperand(Elaborator &el, llvm::StringRef text,
                       const std::vector<mlir::Value> &operands, SourceRange r) {
  text = text.trim();
  int64_t literal;
  if (!text.getAsInteger(0, literal))
    return i32Constant(el, literal, r);
  unsigned index;
  if (text.consume_front("$") && !text.getAsInteger(10, index)) {
    if (index >= operands.size())
      el.fail(r, "the inline assembly uses $" + std::to_string(index) + " but has " +
                     std::to_string(operands.size()) + " operand(s)");
    return operands[index];
  }
  el.fail(r, "pkc reads the operands of a barrier in inline assembly as integers or $k, got '" +
                 text.str() + "'");
}

/// Emits one PTX statement of an inline_asm as the pk op it is.
void emitPtxStatement(Elaborator &el, llvm::StringRef statement,
                      const std::vector<mlir::Value> &operands, SourceRange r) {
  llvm::StringRef trimmed = statement.trim();
  size_t space = trimmed.find_first_of(" \t");
  llvm::StringRef opcode = trimmed.take_front(space), rest = trimmed.drop_front(opcode.size());
  llvm::SmallVector<llvm::StringRef> fields;
  if (!rest.trim().empty())
    rest.split(fields, ',');
  mlir::OpBuilder &b = el.builder();
  if (opcode == "fence.proxy.async.shared::cta" && fields.empty()) {
    pk::FenceAsyncSharedOp::create(b, el.loc(r));
    return;
  }
  // bar.sync / barrier.sync / barrier.cta.sync, .aligned or not (pkc's
  // threads arrive a warp at a time, as aligned barriers do), and arrive.
  llvm::StringRef name = opcode;
  name.consume_back(".aligned");
  bool sync = name == "bar.sync" || name == "barrier.sync" || name == "barrier.cta.sync" ||
              name == "bar.cta.sync";
  bool arrive = name == "bar.arrive" || name == "barrier.arrive" || name == "barrier.cta.arrive" ||
                name == "bar.cta.arrive";
  if ((sync && (fields.size() == 1 || fields.size() == 2)) || (arrive && fields.size() == 2)) {
    mlir::Value id = asmOperand(el, fields[0], operands, r);
    mlir::Value threads;
    if (fields.size() == 2) {
      threads = asmOperand(el, fields[1], operands, r);
    } else {
      // Without a count, every thread of the CTA: its Pallas threads'.
      const MeshInfo &mesh = requireMesh(el, r, "a barrier in inline assembly");
      threads = i32Constant(el, 128 * mesh.mesh->numThreads, r);
    }
    // Constants are checked here, at the user's line (the verifier would
    // name only the op); others where they run.
    std::optional<int64_t> v = mlir::getConstantIntValue(id),
                           n = mlir::getConstantIntValue(threads);
    if (std::string why = pk::namedBarrierProblem(v.value_or(0), n.value_or(32)); !why.empty())
      el.fail(r, why);
    auto op = pk::NamedBarrierOp::create(b, el.loc(r), id, threads);
    if (arrive)
      op.setArrive(true);
    return;
  }
  el.fail(r, "pkc does not model the PTX '" + statement.trim().str() +
                 "' in plgpu.inline_mgpu: the inline assembly it understands is bar.sync / "
                 "bar.arrive / barrier[.cta].sync / barrier[.cta].arrive[.aligned] with a barrier "
                 "id and a thread count, and fence.proxy.async.shared::cta");
}

/// llvm.inline_asm(res, operands, asm_string, constraints, ...).
Obj inlineAsm(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"res"},
                               {"operands"},
                               {"asm_string"},
                               {"constraints"},
                               {"has_side_effects", none(), true},
                               {"is_align_stack", none(), true},
                               {"tail_call_kind", none(), true},
                               {"asm_dialect", none(), true},
                               {"operand_attrs", none(), true},
                               {"loc", none(), true},
                               {"ip", none(), true}});
  requireInlineBody(el, args.range, "llvm.inline_asm");
  auto *type = llvm::dyn_cast<CallableObj>(a[0].get());
  if (!type || !type->members.count("__mlir_type__") ||
      enumName(type->members["__mlir_type__"]) != "!llvm.void")
    el.fail(a.range(0),
            "pkc models inline assembly without results (ir.Type.parse(\"!llvm.void\"))");
  std::vector<mlir::Value> operands;
  for (const Obj &o : el.iterate(a[1], a.range(1))) {
    ArrayPtr v = el.arrays().toArray(o, a.range(1));
    if (v->rank() != 0 || !isInteger(v->dtype))
      el.fail(a.range(1), "the operands of inline assembly must be integer scalars (a "
                          "WG_SPLAT argument's .registers[()])");
    operands.push_back(el.arrays().cast(v, DType::I32, a.range(1))->value);
  }
  std::string constraints = el.toStr(a[3], a.range(3), "the constraints");
  llvm::SmallVector<llvm::StringRef> kinds;
  if (!llvm::StringRef(constraints).trim().empty())
    llvm::StringRef(constraints).split(kinds, ',');
  if (kinds.size() != operands.size())
    el.fail(a.range(3), "the constraints '" + constraints + "' name " +
                            std::to_string(kinds.size()) + " operand(s) for " +
                            std::to_string(operands.size()));
  for (llvm::StringRef kind : kinds)
    if (kind.trim() != "r" && kind.trim() != "n")
      el.fail(a.range(3), "pkc models operands of inline assembly in 32-bit registers (\"r\"), "
                          "got '" +
                              kind.trim().str() + "'");
  std::string text = el.toStr(a[2], a.range(2), "the assembly");
  llvm::SmallVector<llvm::StringRef> statements;
  llvm::StringRef(text).split(statements, ';');
  bool any = false;
  for (llvm::StringRef s : statements)
    for (llvm::StringRef line : llvm::split(s, '\n'))
      if (!line.trim().empty()) {
        emitPtxStatement(el, line, operands, a.range(2));
        any = true;
      }
  if (!any)
    el.fail(a.range(2), "the inline assembly is empty");
  return none();
}

/// nvvm.fence_proxy(kind, space=): the async-shared fence of one CTA.
Obj fenceProxy(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(
      args, {{"kind"}, {"space", none(), true}, {"loc", none(), true}, {"ip", none(), true}});
  requireInlineBody(el, args.range, "nvvm.fence_proxy");
  if (enumName(a[0]) != "nvvm.ProxyKind.async_shared" ||
      enumName(a[1]) != "nvvm.SharedSpace.shared_cta")
    el.fail(args.range, "pkc models nvvm.fence_proxy(nvvm.ProxyKind.async_shared, "
                        "space=nvvm.SharedSpace.shared_cta) only");
  pk::FenceAsyncSharedOp::create(el.builder(), el.loc(args.range));
  return none();
}

/// What plgpu.inline_mgpu(...)(f) returns: calling it runs f.
Obj inlineCall(Elaborator &el, CallArgs &args, const Obj &body, size_t arity) {
  requireMesh(el, args.range, "a plgpu.inline_mgpu function");
  if (!args.keywords.empty())
    el.fail(args.range, "a plgpu.inline_mgpu function takes its arguments by position");
  if (args.positional.size() != arity)
    el.fail(args.range, "this plgpu.inline_mgpu function has " + std::to_string(arity) +
                            " argument type(s) but is called with " +
                            std::to_string(args.positional.size()) + " argument(s)");
  std::vector<Obj> positional;
  auto ctx = bindingsModule("mosaic_gpu.LaunchContext");
  ctx->why = "the launch context (the first argument of an inline_mgpu body) is Mosaic GPU's; "
             "pkc does not model it";
  positional.push_back(ctx);
  for (size_t i = 0; i < arity; ++i) {
    ArrayPtr v = el.arrays().toArray(args.positional[i], args.rangeOf(i));
    if (v->rank() != 0)
      el.fail(args.rangeOf(i), "pkc passes scalars (plgpu.Layout.WG_SPLAT) to plgpu.inline_mgpu "
                               "bodies, not arrays of shape " +
                                   shapeText(v->shape));
    positional.push_back(fragmentedScalar(v));
  }
  ++inlineDepth;
  Obj result;
  try {
    result = callAt(el, body, positional, {}, args.range);
  } catch (...) {
    --inlineDepth;
    throw;
  }
  --inlineDepth;
  if (!isNone(result))
    el.fail(args.range, "this plgpu.inline_mgpu body returns a value: bodies that compute arrays "
                        "with Mosaic GPU's FragmentedArray are not supported");
  return none();
}

/// plgpu.inline_mgpu(arg_types=, return_type=): the decorator.
Obj inlineMgpu(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"arg_types", makeTuple({}), true}, {"return_type", none(), true}});
  if (!isNone(a[1]))
    el.fail(a.range(1), "plgpu.inline_mgpu(return_type=): bodies that compute arrays with Mosaic "
                        "GPU's FragmentedArray are not supported (pkc models inline_mgpu bodies "
                        "that synchronize: named barriers and proxy fences)");
  size_t arity = 0;
  for (const Obj &t : el.iterate(a[0], a.range(0))) {
    auto *layout = llvm::dyn_cast<LayoutObj>(t.get());
    auto splat = layout ? llvm::dyn_cast_or_null<pk::GpuLayoutAttr>(layout->attr) : nullptr;
    if (!splat || splat.getValue() != pk::GpuLayout::WGSplat)
      el.fail(a.range(0), "plgpu.inline_mgpu takes scalar arguments (plgpu.Layout.WG_SPLAT); " +
                              typeName(*t) + " arguments are not supported");
    ++arity;
  }
  return builtin("plgpu.inline_mgpu", [arity](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs f = el.bind(args, {{"f"}});
    Obj body = f[0];
    return builtin("plgpu.inline_mgpu function", [body, arity](Elaborator &el, CallArgs &args) {
      return inlineCall(el, args, body, arity);
    });
  });
}

} // namespace

void defineInlineMgpu(NamespaceObj &plgpu) { define(plgpu, "inline_mgpu", inlineMgpu); }

void addMlirBindingModules(std::map<std::string, Obj> &modules) {
  auto ir = bindingsModule("jaxlib.mlir.ir");
  auto type = bindingsModule("jaxlib.mlir.ir.Type");
  define(*type, "parse", parseType);
  ir->members["Type"] = type;

  auto llvmDialect = bindingsModule("jaxlib.mlir.dialects.llvm");
  define(*llvmDialect, "inline_asm", inlineAsm);

  auto nvvm = bindingsModule("jaxlib.mlir.dialects.nvvm");
  define(*nvvm, "fence_proxy", fenceProxy);
  nvvm->members["ProxyKind"] = enumNamespace("nvvm.ProxyKind", {"async_shared"});
  nvvm->members["SharedSpace"] = enumNamespace("nvvm.SharedSpace", {"shared_cta"});

  auto dialects = bindingsModule("jaxlib.mlir.dialects");
  dialects->members["llvm"] = llvmDialect;
  dialects->members["nvvm"] = nvvm;
  auto mlir = bindingsModule("jaxlib.mlir");
  mlir->members["ir"] = ir;
  mlir->members["dialects"] = dialects;
  // jaxlib.mlir and JAX's re-export of it, jax._src.lib.mlir.
  for (const char *root : {"jaxlib.mlir", "jax._src.lib.mlir"}) {
    std::string r = root;
    modules[r] = mlir;
    modules[r + ".ir"] = ir;
    modules[r + ".dialects"] = dialects;
    modules[r + ".dialects.llvm"] = llvmDialect;
    modules[r + ".dialects.nvvm"] = nvvm;
  }
  auto jaxlib = bindingsModule("jaxlib");
  jaxlib->members["mlir"] = mlir;
  modules["jaxlib"] = jaxlib;
  if (auto it = modules.find("jax._src.lib"); it != modules.end())
    llvm::cast<NamespaceObj>(*it->second).members["mlir"] = mlir;
  // Mosaic GPU's own Python API: inline_mgpu bodies call it; pkc does not
  // model it.
  auto mgpu = bindingsModule("jax.experimental.mosaic.gpu");
  mgpu->why = "jax.experimental.mosaic.gpu is Mosaic GPU's own Python API, which pkc does not "
              "model (plgpu.inline_mgpu bodies may synchronize with llvm.inline_asm barriers and "
              "nvvm.fence_proxy; see docs/mosaic-gpu.md)";
  auto mosaic = bindingsModule("jax.experimental.mosaic");
  mosaic->why = mgpu->why;
  mosaic->members["gpu"] = mgpu;
  modules["jax.experimental.mosaic"] = mosaic;
  modules["jax.experimental.mosaic.gpu"] = mgpu;
}

} // namespace pk::elab

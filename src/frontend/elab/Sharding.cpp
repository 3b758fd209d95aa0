//===- Sharding.cpp - jax.sharding, make_mesh and shard_map on one device -===//
//
// Public kernels are often wrapped for many devices: `jax.make_mesh((1,),
// ("device",))`, `@jax.shard_map(mesh=..., in_specs=P(), out_specs=P())`,
// `lax.axis_index("device")`. pkc compiles for one device, and over a mesh
// of one device all of that has a plain reading: every shard is the whole
// array, so shard_map calls its function on the arguments as they are; an
// axis index is 0 and its size 1; psum, pmean, pmax and pmin over it
// return their operand. A mesh of more than one device is an error at the
// line that makes it.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/Tree.h"

#include <numeric>

namespace pk::elab {

namespace {

constexpr const char *kMeshName = "jax.sharding.Mesh";

/// A mesh of one device with these axis names (each of size 1).
Obj makeOneDeviceMesh(const std::vector<std::string> &names, const Obj &device) {
  auto mesh = std::make_shared<NamespaceObj>(kMeshName);
  std::vector<Obj> nameObjs, sizes;
  auto shape = std::make_shared<DictObj>();
  for (const std::string &n : names) {
    nameObjs.push_back(makeStr(n));
    sizes.push_back(makeInt(1));
    shape->entries.emplace_back(makeStr(n), makeInt(1));
  }
  mesh->members["axis_names"] = makeTuple(nameObjs);
  mesh->members["axis_sizes"] = makeTuple(sizes);
  mesh->members["shape"] = shape;
  mesh->members["shape_tuple"] = makeTuple({});
  mesh->members["size"] = makeInt(1);
  mesh->members["empty"] = makeBool(names.empty());
  mesh->members["devices"] = makeList({device});
  return mesh;
}

/// The sizes a mesh is asked for must multiply to one device.
void requireOneDevice(Elaborator &el, int64_t devices, SourceRange r, const std::string &what) {
  if (devices != 1)
    el.fail(r, what + " asks for a mesh of " + std::to_string(devices) +
                   " devices; pkc compiles for one device, so only a mesh of one device (axes "
                   "of size 1) is supported");
}

std::vector<std::string> meshAxes(Elaborator &el, const Obj &mesh, SourceRange r) {
  auto *ns = llvm::dyn_cast<NamespaceObj>(mesh.get());
  if (!ns || ns->name != kMeshName)
    el.fail(r, "jax.shard_map's mesh must be a jax.sharding.Mesh (jax.make_mesh makes one), got " +
                   typeName(*mesh));
  return axisNames(el, ns->members.at("axis_names"), r, "mesh axis name");
}

/// Whether every name in `names` (one, or a tuple) is an axis of an
/// enclosing shard_map's mesh; none of them is a TensorCore or GPU axis.
bool namesDeviceAxes(Elaborator &el, const Obj &names) {
  if (el.deviceMeshAxes.empty() || !names || isNone(names))
    return false;
  std::vector<std::string> list;
  if (auto *s = llvm::dyn_cast<StrObj>(names.get()))
    list.push_back(s->value);
  else if (auto *seq = llvm::dyn_cast<SequenceObj>(names.get()))
    for (const Obj &item : seq->items) {
      auto *s = llvm::dyn_cast<StrObj>(item.get());
      if (!s)
        return false;
      list.push_back(s->value);
    }
  if (list.empty())
    return false;
  for (const std::string &name : list) {
    bool found = false;
    for (const std::vector<std::string> &axes : el.deviceMeshAxes)
      found |= llvm::is_contained(axes, name);
    if (!found)
      return false;
  }
  return true;
}

/// jax.shard_map(f, *, mesh, in_specs, out_specs, ...): `f` itself, called
/// with the mesh's axes bound (a one-device mesh's shards are whole).
Obj shardMapped(const Obj &f, std::vector<std::string> axes) {
  return builtin("jax.shard_map(...)", [f, axes](Elaborator &el, CallArgs &call) -> Obj {
    el.deviceMeshAxes.push_back(axes);
    struct Pop {
      Elaborator &el;
      ~Pop() { el.deviceMeshAxes.pop_back(); }
    } pop{el};
    return el.call(f, call);
  });
}

} // namespace

Obj deviceAxisIndex(Elaborator &el, const Obj &names, SourceRange r) {
  if (!namesDeviceAxes(el, names))
    return nullptr;
  if (el.mode() == EmitMode::Kernel) // an int32 value, as JAX's
    return el.arrays().toArray(makeInt(0), r, JaxType{DType::I32, false});
  return makeInt(0);
}

std::optional<int64_t> deviceAxisSize(Elaborator &el, const Obj &names) {
  return namesDeviceAxes(el, names) ? std::optional<int64_t>(1) : std::nullopt;
}

void defineSharding(Elaborator &el, NamespaceObj &jax, NamespaceObj &lax) {
  // The one device jax.devices() lists.
  CallArgs noArgs;
  Obj devices = llvm::cast<BuiltinObj>(*jax.members.at("devices")).fn(el, noArgs);
  Obj theDevice = llvm::cast<SequenceObj>(*devices).items.front();

  auto sharding = std::make_shared<NamespaceObj>("jax.sharding");
  // PartitionSpec(*parts): a tuple, as JAX's is a tuple subclass.
  define(*sharding, "PartitionSpec", [](Elaborator &el, CallArgs &args) -> Obj {
    if (!args.keywords.empty())
      el.fail(args.range, "jax.sharding.PartitionSpec takes its parts positionally");
    return makeTuple(args.positional);
  });
  jax.members["P"] = sharding->members["PartitionSpec"]; // jax.P, newer JAX's short name
  // Mesh(devices, axis_names): the devices a (nested) list, as
  // np.array(jax.devices()) leaves them.
  define(*sharding, "Mesh", [theDevice](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"devices"}, {"axis_names"}, {"axis_types", none(), true}});
    int64_t count = 0;
    forEachLeaf(a[0], [&](const Obj &) { ++count; });
    requireOneDevice(el, count, a.range(0), "jax.sharding.Mesh");
    return makeOneDeviceMesh(axisNames(el, a[1], a.range(1), "mesh axis name"), theDevice);
  });
  define(*sharding, "NamedSharding", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"mesh"}, {"spec"}, {"memory_kind", none(), true}});
    auto named = std::make_shared<NamespaceObj>("jax.sharding.NamedSharding");
    named->members["mesh"] = a[0];
    named->members["spec"] = a[1];
    return named;
  });
  // Abstract meshes name axes and sizes without devices (code traces under
  // them, `with jax.sharding.use_abstract_mesh(m):`); they change nothing
  // pkc computes.
  define(*sharding, "AbstractDevice", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"device_kind"}, {"num_cores", none()}, {"platform", makeStr("")}});
    auto device = std::make_shared<NamespaceObj>("jax.sharding.AbstractDevice");
    device->members["device_kind"] = makeStr(el.toStr(a[0], a.range(0), "device_kind"));
    device->members["num_cores"] = a[1];
    device->members["platform"] = a[2];
    return device;
  });
  define(*sharding, "AbstractMesh", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"axis_sizes"},
                                 {"axis_names"},
                                 {"axis_types", none()},
                                 {"abstract_device", none(), true}});
    std::vector<int64_t> sizes = el.toShape(a[0], a.range(0), "axis_sizes");
    std::vector<std::string> names = axisNames(el, a[1], a.range(1), "mesh axis name");
    if (names.size() != sizes.size())
      el.raise(a.range(1), "ValueError",
               "AbstractMesh has " + std::to_string(sizes.size()) + " axis sizes and " +
                   std::to_string(names.size()) + " axis names");
    auto mesh = std::make_shared<NamespaceObj>("jax.sharding.AbstractMesh");
    auto shape = std::make_shared<DictObj>();
    std::vector<Obj> sizeObjs, nameObjs, pairs;
    int64_t size = sizes.empty() ? 0 : 1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      sizeObjs.push_back(makeInt(sizes[i]));
      nameObjs.push_back(makeStr(names[i]));
      pairs.push_back(makeTuple({makeStr(names[i]), makeInt(sizes[i])}));
      shape->entries.emplace_back(makeStr(names[i]), makeInt(sizes[i]));
      if (sizes[i] < 1 || __builtin_mul_overflow(size, sizes[i], &size))
        el.fail(a.range(0), "axis_sizes must be positive and their product fit in 64 bits");
    }
    mesh->members["axis_sizes"] = makeTuple(sizeObjs);
    mesh->members["axis_names"] = makeTuple(nameObjs);
    mesh->members["shape"] = shape;
    mesh->members["shape_tuple"] = makeTuple(pairs);
    mesh->members["size"] = makeInt(size);
    mesh->members["empty"] = makeBool(names.empty());
    mesh->members["abstract_device"] = a[3];
    return mesh;
  });
  sharding->members["use_abstract_mesh"] = namingContext("jax.sharding.use_abstract_mesh");
  auto axisType = std::make_shared<NamespaceObj>("jax.sharding.AxisType");
  for (const char *t : {"Auto", "Explicit", "Manual"})
    axisType->members[t] = makeStr(t);
  sharding->members["AxisType"] = axisType;
  // What other code reads of jax.sharding stays what it was: get_abstract_mesh.
  if (auto *old = llvm::dyn_cast_or_null<NamespaceObj>(jax.members["sharding"].get()))
    for (const auto &[name, member] : old->members)
      sharding->members.emplace(name, member);
  jax.members["sharding"] = sharding;

  define(jax, "make_mesh", [theDevice](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(
        args,
        {{"axis_shapes"}, {"axis_names"}, {"axis_types", none(), true}, {"devices", none(), true}});
    std::vector<int64_t> shape = el.toShape(a[0], a.range(0), "axis_shapes");
    std::vector<std::string> names = axisNames(el, a[1], a.range(1), "mesh axis name");
    if (names.size() != shape.size())
      el.raise(args.range, "ValueError",
               "axis_shapes and axis_names must have the same length, got " +
                   std::to_string(shape.size()) + " and " + std::to_string(names.size()));
    requireOneDevice(
        el, std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>()),
        a.range(0), "jax.make_mesh");
    return makeOneDeviceMesh(names, theDevice);
  });
  for (const char *name : {"device_count", "local_device_count"})
    define(jax, name, [](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {{"backend", none(), true}});
      return makeInt(1);
    });
  // Placing a value on the one device leaves it as it is.
  define(jax, "device_put", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"},
                                 {"device", none()},
                                 {"src", none(), true},
                                 {"donate", none(), true},
                                 {"may_alias", none(), true}});
    return a[0];
  });

  Obj shardMap = builtin("jax.shard_map", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"f", none()},
                                 {"mesh", none()},
                                 {"in_specs", none()},
                                 {"out_specs", none()},
                                 {"axis_names", none(), true},
                                 {"check_vma", none(), true},
                                 {"check_rep", none(), true},
                                 {"auto", none(), true}});
    if (isNone(a[1]))
      el.fail(args.range, "jax.shard_map needs mesh= (pkc has no ambient mesh)");
    std::vector<std::string> axes = meshAxes(el, a[1], a.range(1));
    if (!isNone(a[0]))
      return shardMapped(a[0], axes);
    return builtin("jax.shard_map", [axes](Elaborator &el, CallArgs &inner) -> Obj {
      BoundArgs f = el.bind(inner, {{"f"}});
      return shardMapped(f[0], axes);
    });
  });
  jax.members["shard_map"] = shardMap;
  auto experimental = llvm::dyn_cast_or_null<NamespaceObj>(jax.members["experimental"].get());
  if (experimental) {
    auto module = std::make_shared<NamespaceObj>("jax.experimental.shard_map");
    module->members["shard_map"] = shardMap;
    experimental->members["shard_map"] = module;
  }

  // Collectives over a one-device axis: the operand itself.
  for (const char *name : {"psum", "pmean", "pmax", "pmin"}) {
    std::string full = std::string("lax.") + name;
    lax.members[name] = builtin(full, [full](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}, {"axis_name"}, {"axis_index_groups", none(), true}});
      // Over a named grid axis, of a number every program has alike (the
      // idiom that counts programs: lax.psum(1, "i")).
      if (std::optional<size_t> axis = el.namedGridAxis(a[1])) {
        if (!llvm::isa<IntObj, FloatObj, BoolObj, SymIntObj>(a[0].get()))
          el.fail(a.range(0), full + " over a grid axis takes a Python number (the same in every "
                                     "program); programs of a pallas_call do not exchange values");
        if (full != "lax.psum")
          return a[0];
        return binaryOperator(el, ast::BinaryOp::Mul, a[0],
                              gridAxisQuery(el, numPrograms, *axis, args.range), args.range);
      }
      if (!namesDeviceAxes(el, a[1]))
        el.fail(a.range(1), full + " reduces over the axes of a jax.shard_map mesh; " +
                                repr(*a[1]) + " is not one here");
      return a[0];
    });
  }
}

} // namespace pk::elab

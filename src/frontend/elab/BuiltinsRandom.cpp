//===- BuiltinsRandom.cpp - JAX's threefry hash and PRNG registry --------===//
//
// JAX's TPU PRNG kernels (jax/experimental/pallas/ops/tpu/random) hash
// counters with the primitive of jax._src.random.threefry2x32 inside the
// kernel (`threefry2x32_p.bind(k1, k2, hi, lo)`, which Pallas lowers by
// unrolling JAX's rounds), and register themselves with
// jax._src.random.prng. pkc computes the same rounds with the array ops
// every backend lowers (uint32 adds, xors and shifts), and gives the
// module's seed, split, fold_in and random_bits as JAX computes them with
// jax_threefry_partitionable on (its default). A registered PRNG is
// recorded; keys made with it (jax.random.key(..., impl=name)) belong to
// jax.random, which runs outside the kernels pkc compiles.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Operators.h"
#include "support/ShapeText.h"

#include "llvm/Support/MathExtras.h"

namespace pk::elab {

using ast::BinaryOp;

namespace {

/// The elements along the leading axis of a pair (`k1, k2 = key`): a
/// tuple or list of two, or an array whose first axis is 2.
std::pair<Obj, Obj> unpackPair(Elaborator &el, const Obj &pair, SourceRange r,
                               const std::string &what) {
  if (llvm::isa<SequenceObj>(pair.get())) {
    std::vector<Obj> items = el.iterate(pair, r);
    if (items.size() != 2)
      el.raise(r, "ValueError", what + " must hold 2 values, got " + std::to_string(items.size()));
    return {items[0], items[1]};
  }
  ArrayOps &ops = el.arrays();
  ArrayPtr a = ops.toArray(pair, r);
  if (a->shape.empty() || a->shape[0] != 2)
    el.raise(r, "ValueError", what + " must have 2 elements along its first axis");
  auto element = [&](int64_t i) {
    std::vector<int64_t> start(a->shape.size(), 0), limit = a->shape, stride(a->shape.size(), 1);
    start[0] = i;
    limit[0] = i + 1;
    return ops.squeeze(ops.slice(a, start, limit, stride, r), {0}, r);
  };
  return {element(0), element(1)};
}

void requireUint32(Elaborator &el, const Obj &v, SourceRange r, const std::string &what) {
  JaxType t = el.arrays().typeOf(v, r);
  if (t.dtype != DType::U32 || t.weak)
    el.raise(r, "TypeError", what + " must have uint32 type, got " + dtypeInfo(t.dtype).numpyName);
}

/// The Threefry-2x32 hash of (x1, x2) under the key (k1, k2), broadcast
/// together: JAX's _threefry2x32_lowering, unrolled, round for round.
std::pair<Obj, Obj> threefry2x32(Elaborator &el, const Obj &k1, const Obj &k2, const Obj &x1,
                                 const Obj &x2, SourceRange r) {
  for (const Obj *v : {&k1, &k2, &x1, &x2})
    requireUint32(el, *v, r, "Arguments to threefry2x32");
  ArrayOps &ops = el.arrays();
  // Each step broadcasts its operands, as JAX's lowering does; the steps
  // are sequenced one by one so that the ops come out in JAX's order.
  auto op = [&](BinaryOp kind, const Obj &a, const Obj &b) { return ops.binary(kind, a, b, r); };
  auto rotateLeft = [&](const Obj &x, int64_t d) {
    Obj up = op(BinaryOp::LShift, x, makeInt(d));
    Obj down = op(BinaryOp::RShift, x, makeInt(32 - d));
    return op(BinaryOp::BitOr, up, down);
  };
  const int64_t rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  Obj ks[3] = {k1, k2, op(BinaryOp::BitXor, op(BinaryOp::BitXor, k1, k2), makeInt(0x1BD11BDA))};
  Obj x[2];
  x[0] = op(BinaryOp::Add, x1, ks[0]);
  x[1] = op(BinaryOp::Add, x2, ks[1]);
  for (int64_t round = 0; round < 5; ++round) {
    for (int64_t rotation : rotations[round % 2]) {
      x[0] = op(BinaryOp::Add, x[0], x[1]);
      Obj rotated = rotateLeft(x[1], rotation);
      x[1] = op(BinaryOp::BitXor, x[0], rotated);
    }
    x[0] = op(BinaryOp::Add, x[0], ks[(round + 1) % 3]);
    Obj keyed = op(BinaryOp::Add, x[1], ks[(round + 2) % 3]);
    x[1] = op(BinaryOp::Add, keyed, makeInt(round + 1));
  }
  return {x[0], x[1]};
}

/// The high and low 32 bits of each element's row-major position in
/// `shape` (JAX's prng.iota_2x32_shape).
std::pair<Obj, Obj> iota2x32(Elaborator &el, const std::vector<int64_t> &shape, SourceRange r) {
  ArrayOps &ops = el.arrays();
  int64_t count = 1;
  for (int64_t d : shape)
    if (llvm::MulOverflow(count, d, count) || count > (int64_t(1) << 32))
      el.fail(r, "random bits for more than 2^32 elements (shape " + shapeText(shape) +
                     ") are not supported: their counters' high words would be non-zero");
  Obj lo = ops.constantInt(0, DType::U32, shape, r);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    Obj position = ops.iota(shape, static_cast<int64_t>(d), DType::U32, r);
    lo = ops.binary(BinaryOp::Add, lo, ops.binary(BinaryOp::Mul, position, makeInt(stride), r), r);
    stride *= shape[d];
  }
  return {ops.constantInt(0, DType::U32, shape, r), lo};
}

/// A threefry key: uint32 of shape (2,) (JAX's _is_threefry_prng_key).
void requireKey(Elaborator &el, const Obj &key, SourceRange r, const std::string &function) {
  if (!ArrayOps::isNumeric(key))
    el.raise(r, "TypeError", function + " got invalid prng key.");
  ArrayPtr a = el.arrays().toArray(key, r);
  if (a->shape != std::vector<int64_t>{2} || a->dtype != DType::U32)
    el.raise(r, "TypeError", function + " got invalid prng key.");
}

/// jnp.stack([a, b], axis) of two arrays of one shape.
Obj stackPair(Elaborator &el, const Obj &a, const Obj &b, int64_t axis, SourceRange r) {
  ArrayOps &ops = el.arrays();
  ArrayPtr x = ops.toArray(a, r), y = ops.toArray(b, r);
  return ops.concatenate({ops.expandDims(x, {axis}, r), ops.expandDims(y, {axis}, r)}, axis, r);
}

/// threefry_seed: the key of an integer seed, its high and low words.
Obj threefrySeed(Elaborator &el, const Obj &seed, SourceRange r) {
  ArrayOps &ops = el.arrays();
  ArrayPtr s = ops.toArray(seed, r);
  if (!s->shape.empty())
    el.raise(r, "TypeError", "PRNG key seed must be a scalar");
  DTypeKind kind = dtypeInfo(s->dtype).kind;
  if (kind != DTypeKind::Signed && kind != DTypeKind::Unsigned)
    el.raise(r, "TypeError", "PRNG key seed must be an integer");
  Obj high = ops.constantInt(0, DType::U32, {}, r);
  if (dtypeInfo(s->dtype).bits == 64) {
    // lax.shift_right_logical: the bits, not the sign, move down.
    ArrayPtr bits = kind == DTypeKind::Signed ? ops.bitcast(s, DType::U64, r) : s;
    high =
        ops.cast(ops.toArray(ops.binary(BinaryOp::RShift, bits, makeInt(32), r), r), DType::U32, r);
  }
  Obj low = ops.cast(s, DType::U32, r); // the low 32 bits, as & 0xFFFFFFFF keeps
  return stackPair(el, high, low, 0, r);
}

/// threefry_2x32: the hash of `count`'s elements, as two halves of its
/// flattened values (padded by a zero when odd).
Obj threefry2x32Count(Elaborator &el, const Obj &keypair, const Obj &count, SourceRange r) {
  ArrayOps &ops = el.arrays();
  auto [k1, k2] = unpackPair(el, keypair, r, "the key pair");
  requireUint32(el, k1, r, "threefry_2x32's key");
  requireUint32(el, k2, r, "threefry_2x32's key");
  requireUint32(el, count, r, "threefry_2x32's count");
  ArrayPtr counts = ops.toArray(count, r);
  int64_t n = 1;
  for (int64_t d : counts->shape)
    n *= d;
  ArrayPtr flat = ops.reshape(counts, {n}, r);
  if (n % 2)
    flat = ops.concatenate({flat, ops.constantInt(0, DType::U32, {1}, r)}, 0, r);
  int64_t half = (n + 1) / 2;
  ArrayPtr first = ops.slice(flat, {0}, {half}, {1}, r);
  ArrayPtr second = ops.slice(flat, {half}, {2 * half}, {1}, r);
  auto [o1, o2] = threefry2x32(el, k1, k2, first, second, r);
  ArrayPtr out = ops.concatenate({o1, o2}, 0, r);
  if (n % 2)
    out = ops.slice(out, {0}, {n}, {1}, r);
  return ops.reshape(out, counts->shape, r);
}

Obj threefrySplit(Elaborator &el, const Obj &key, const std::vector<int64_t> &shape,
                  SourceRange r) {
  auto [k1, k2] = unpackPair(el, key, r, "the key");
  auto [hi, lo] = iota2x32(el, shape, r);
  auto [bits1, bits2] = threefry2x32(el, k1, k2, hi, lo, r);
  return stackPair(el, bits1, bits2, static_cast<int64_t>(shape.size()), r);
}

Obj threefryRandomBits(Elaborator &el, const Obj &key, int64_t bitWidth,
                       const std::vector<int64_t> &shape, SourceRange r) {
  ArrayOps &ops = el.arrays();
  requireKey(el, key, r, "threefry_random_bits");
  if (bitWidth != 8 && bitWidth != 16 && bitWidth != 32 && bitWidth != 64)
    el.raise(r, "TypeError", "requires 8-, 16-, 32- or 64-bit field width.");
  auto [k1, k2] = unpackPair(el, key, r, "the key");
  auto [hi, lo] = iota2x32(el, shape, r);
  auto [bits1, bits2] = threefry2x32(el, k1, k2, hi, lo, r);
  if (bitWidth == 64) {
    Obj high = ops.cast(ops.toArray(bits1, r), DType::U64, r);
    Obj low = ops.cast(ops.toArray(bits2, r), DType::U64, r);
    return ops.binary(BinaryOp::BitOr, ops.binary(BinaryOp::LShift, high, makeInt(32), r), low, r);
  }
  Obj bits = ops.binary(BinaryOp::BitXor, bits1, bits2, r);
  if (bitWidth == 32)
    return bits;
  return ops.cast(ops.toArray(bits, r), bitWidth == 8 ? DType::U8 : DType::U16, r);
}

} // namespace

std::shared_ptr<NamespaceObj> makeJaxPrngNamespace() {
  auto ns = std::make_shared<NamespaceObj>("jax._src.random.prng");
  auto registered = std::make_shared<DictObj>();
  ns->members["prngs"] = registered;
  define(*ns, "PRNGImpl", [](Elaborator &el, CallArgs &args) -> Obj {
    static const char *fields[] = {"key_shape", "seed", "split", "random_bits",
                                   "fold_in",   "name", "tag"};
    BoundArgs a = el.bind(args, {{"key_shape"},
                                 {"seed"},
                                 {"split"},
                                 {"random_bits"},
                                 {"fold_in"},
                                 {"name", makeStr("<unnamed>")},
                                 {"tag", makeStr("?")}});
    auto impl = std::make_shared<NamespaceObj>("PRNGImpl");
    for (size_t i = 0; i < std::size(fields); ++i)
      impl->members[fields[i]] = a[i];
    return impl;
  });
  define(*ns, "register_prng", [registered](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"impl"}});
    auto *impl = llvm::dyn_cast<NamespaceObj>(a[0].get());
    if (!impl || impl->name != "PRNGImpl")
      el.raise(a.range(0), "TypeError", "register_prng takes a PRNGImpl");
    Obj name = impl->members.at("name");
    if (dictGet(*registered, name))
      el.raise(a.range(0), "ValueError",
               "PRNG with name " + el.toStr(name, a.range(0), "name") + " already registered");
    dictSet(el, *registered, name, a[0], a.range(0));
    return none();
  });
  return ns;
}

std::shared_ptr<NamespaceObj> makeJaxThreefryNamespace(const std::shared_ptr<NamespaceObj> &prng) {
  auto ns = std::make_shared<NamespaceObj>("jax._src.random.threefry2x32");
  auto primitive = std::make_shared<NamespaceObj>("threefry2x32_p");
  primitive->members["name"] = makeStr("threefry2x32");
  primitive->members["multiple_results"] = makeBool(true);
  define(*primitive, "bind", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"key1"}, {"key2"}, {"x1"}, {"x2"}});
    auto [o1, o2] = threefry2x32(el, a[0], a[1], a[2], a[3], args.range);
    return makeList({o1, o2});
  });
  ns->members["threefry2x32_p"] = primitive;
  define(*ns, "threefry_seed", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"seed"}});
    return threefrySeed(el, a[0], a.range(0));
  });
  define(*ns, "threefry_2x32", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"keypair"}, {"count"}});
    return threefry2x32Count(el, a[0], a[1], args.range);
  });
  define(*ns, "threefry_split", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"key"}, {"shape"}});
    return threefrySplit(el, a[0], el.toShape(a[1], a.range(1), "shape"), args.range);
  });
  define(*ns, "threefry_fold_in", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"key"}, {"data"}});
    ArrayPtr data = el.arrays().toArray(a[1], a.range(1));
    if (!data->shape.empty())
      el.raise(a.range(1), "AssertionError", "threefry_fold_in folds in a scalar");
    Obj seed = threefrySeed(el, el.arrays().cast(data, DType::U32, a.range(1)), a.range(1));
    return threefry2x32Count(el, a[0], seed, args.range);
  });
  define(*ns, "threefry_random_bits", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"key"}, {"bit_width"}, {"shape"}});
    return threefryRandomBits(el, a[0], el.toInt(a[1], a.range(1), "bit_width"),
                              el.toShape(a[2], a.range(2), "shape"), args.range);
  });
  auto impl = std::make_shared<NamespaceObj>("PRNGImpl");
  impl->members["key_shape"] = makeTuple({makeInt(2)});
  for (const char *field : {"seed", "split", "random_bits", "fold_in"})
    impl->members[field] = ns->members.at(std::string("threefry_") + field);
  impl->members["name"] = makeStr("threefry2x32");
  impl->members["tag"] = makeStr("fry");
  ns->members["threefry_prng_impl"] = impl;
  llvm::cast<DictObj>(*prng->members.at("prngs"))
      .entries.emplace_back(makeStr("threefry2x32"), impl);
  return ns;
}

} // namespace pk::elab

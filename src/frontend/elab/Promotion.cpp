//===- Promotion.cpp - The JAX type lattice -------------------------------===//
#include "frontend/elab/Promotion.h"

#include <array>
#include <vector>

namespace pk::elab {
namespace {

// Lattice nodes: every dtype plus the two weak categories.
enum Node : unsigned {
  B1, WeakInt, WeakFloat, U8, U16, U32, U64, S8, S16, S32, S64, BF16, F16, F32, F64, NumNodes
};

Node nodeOf(JaxType t) {
  if (t.weak && t.dtype != DType::Bool)
    return isFloat(t.dtype) ? WeakFloat : WeakInt;
  switch (t.dtype) {
  case DType::Bool: return B1;
  case DType::U8: return U8;
  case DType::U16: return U16;
  case DType::U32: return U32;
  case DType::U64: return U64;
  case DType::I8: return S8;
  case DType::I16: return S16;
  case DType::I32: return S32;
  case DType::I64: return S64;
  case DType::BF16: return BF16;
  case DType::F16: return F16;
  case DType::F32: return F32;
  case DType::F64: return F64;
  }
  return S32;
}

JaxType typeOf(Node n) {
  switch (n) {
  case B1: return {DType::Bool, false};
  case WeakInt: return {DType::I32, true};
  case WeakFloat: return {DType::F32, true};
  case U8: return {DType::U8, false};
  case U16: return {DType::U16, false};
  case U32: return {DType::U32, false};
  case U64: return {DType::U64, false};
  case S8: return {DType::I8, false};
  case S16: return {DType::I16, false};
  case S32: return {DType::I32, false};
  case S64: return {DType::I64, false};
  case BF16: return {DType::BF16, false};
  case F16: return {DType::F16, false};
  case F32: return {DType::F32, false};
  case F64: return {DType::F64, false};
  default: return {DType::F32, false};
  }
}

// JAX's standard lattice (jax._src.dtypes._type_promotion_lattice), without
// the complex and 8-bit float nodes.
const std::vector<Node> &successors(Node n) {
  static const std::array<std::vector<Node>, NumNodes> edges = [] {
    std::array<std::vector<Node>, NumNodes> e;
    e[B1] = {WeakInt};
    e[WeakInt] = {U8, S8};
    e[U8] = {S16, U16};
    e[U16] = {S32, U32};
    e[U32] = {S64, U64};
    e[U64] = {WeakFloat};
    e[S8] = {S16};
    e[S16] = {S32};
    e[S32] = {S64};
    e[S64] = {WeakFloat};
    e[WeakFloat] = {BF16, F16};
    e[BF16] = {F32};
    e[F16] = {F32};
    e[F32] = {F64};
    return e;
  }();
  return edges[n];
}

using NodeSet = std::array<bool, NumNodes>;

NodeSet upperSet(Node n) {
  NodeSet set{};
  std::vector<Node> work{n};
  while (!work.empty()) {
    Node x = work.back();
    work.pop_back();
    if (set[x])
      continue;
    set[x] = true;
    for (Node s : successors(x))
      work.push_back(s);
  }
  return set;
}

Node join(Node a, Node b) {
  NodeSet ua = upperSet(a), ub = upperSet(b);
  // The least upper bound is the common upper bound below all the others.
  for (unsigned c = 0; c < NumNodes; ++c) {
    if (!ua[c] || !ub[c])
      continue;
    NodeSet uc = upperSet(static_cast<Node>(c));
    bool least = true;
    for (unsigned d = 0; d < NumNodes; ++d)
      if (ua[d] && ub[d] && !uc[d])
        least = false;
    if (least)
      return static_cast<Node>(c);
  }
  return F64;
}

bool is64(DType t) { return bitWidth(t) == 64; }

DType narrowTo32(DType t) {
  switch (t) {
  case DType::I64: return DType::I32;
  case DType::U64: return DType::U32;
  case DType::F64: return DType::F32;
  default: return t;
  }
}

} // namespace

JaxType promoteTypes(JaxType a, JaxType b) {
  JaxType r = typeOf(join(nodeOf(a), nodeOf(b)));
  if (is64(r.dtype) && !is64(a.dtype) && !is64(b.dtype))
    r.dtype = narrowTo32(r.dtype);
  return r;
}

JaxType toInexact(JaxType t) {
  if (isFloat(t.dtype))
    return t;
  return {DType::F32, t.weak};
}

} // namespace pk::elab

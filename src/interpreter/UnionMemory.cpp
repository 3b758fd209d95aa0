//===- UnionMemory.cpp - The shared memory of a plgpu.RefUnion ------------===//
#include "interpreter/UnionMemory.h"

#include "ir/DTypeMapping.h"
#include "ir/MosaicGpuRules.h"

namespace pk::interp {

UnionMemory::UnionMemory(pk::RefType buffer)
    : tensorMemory(buffer.getSpace() == MemorySpace::GPUTensorMemory) {
  int64_t bytes = buffer.getNumElements() * pk::elementBytes(buffer.getElementType());
  if (tensorMemory)
    columns = buffer.getShape()[1];
  image.assign(static_cast<size_t>(bytes), 0);
  known.assign(static_cast<size_t>(bytes), 0);
}

int64_t UnionMemory::byteOf(const Member &m, int64_t k) const {
  if (!tensorMemory)
    return m.offset + k * m.elementBytes;
  // One element per 32-bit column of each lane (row).
  int64_t lane = k / m.columns, column = k % m.columns;
  return (lane * columns + m.offset + column) * 4;
}

TensorPtr UnionMemory::member(int64_t offset, pk::RefType type) {
  auto [it, fresh] = byPlace.try_emplace({offset, type.getAsOpaquePointer()}, members.size());
  if (fresh) {
    Member m;
    DType dtype = *dtypeOf(type.getElementType());
    m.data = makeTensor(elementKindOf(dtype), std::vector<int64_t>(type.getShape()));
    fillUninitialized(*m.data, dtype);
    m.data->unionMemory = weak_from_this();
    m.data->unionMember = static_cast<int64_t>(members.size());
    m.offset = offset;
    m.elementBytes = pk::elementBytes(type.getElementType());
    m.columns = tensorMemory ? type.getShape()[1] : 0;
    int64_t n = m.data->size();
    m.first = n ? byteOf(m, 0) : 0;
    m.end = n ? byteOf(m, n - 1) + m.elementBytes : 0;
    members.push_back(std::move(m));
  }
  touch(*members[it->second].data);
  return members[it->second].data;
}

void UnionMemory::touch(Tensor &data) {
  Member &m = members[static_cast<size_t>(data.unionMember)];
  if (m.current)
    return;
  // No two overlapping Refs are current at once: at most the last one
  // touched where `m` lies holds bytes the image lacks.
  for (Member &other : members)
    if (other.current && other.first < m.end && m.first < other.end) {
      flush(other);
      other.current = false;
    }
  load(m);
  m.current = true;
}

void UnionMemory::flush(const Member &m) {
  for (int64_t k = 0, n = m.data->size(); k < n; ++k) {
    uint64_t bits = elementBits(*m.data, k);
    int64_t at = byteOf(m, k);
    for (int64_t b = 0; b < m.elementBytes; ++b) { // little-endian, as the GPU
      image[static_cast<size_t>(at + b)] = static_cast<uint8_t>(bits >> (8 * b));
      known[static_cast<size_t>(at + b)] = 1;
    }
  }
}

void UnionMemory::load(Member &m) {
  for (int64_t k = 0, n = m.data->size(); k < n; ++k) {
    int64_t at = byteOf(m, k);
    uint64_t bits = 0;
    bool written = true;
    for (int64_t b = 0; b < m.elementBytes; ++b) {
      written &= known[static_cast<size_t>(at + b)] != 0;
      bits |= static_cast<uint64_t>(image[static_cast<size_t>(at + b)]) << (8 * b);
    }
    if (written)
      setElementBits(*m.data, k, bits);
  }
}

} // namespace pk::interp

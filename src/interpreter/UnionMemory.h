//===- UnionMemory.h - The shared memory of a plgpu.RefUnion ----*- C++ -*-===//
//
// The Refs of a plgpu.RefUnion share one buffer (pk.ref_reinterpret), and
// on a GPU writing through one changes what the others read there. The
// interpreter holds values wide (Tensor.h), so each Ref keeps its elements
// in a Tensor of its own, and this keeps them coherent as if they were one
// block of bytes: the Ref last touched where it lies is the one whose
// elements are current; touching another Ref that overlaps it first moves
// its elements' bytes into the union's image, then reads the other Ref's
// elements back from there. Bytes nothing wrote leave the reader's
// elements uninitialized, as fresh scratch is.
//
//===----------------------------------------------------------------------===//
#ifndef PK_INTERPRETER_UNIONMEMORY_H
#define PK_INTERPRETER_UNIONMEMORY_H

#include "interpreter/Tensor.h"
#include "ir/PkDialect.h"

#include <map>

namespace pk::interp {

class UnionMemory : public std::enable_shared_from_this<UnionMemory> {
public:
  /// The union's buffer: bytes (shared memory), or (128, columns) 32-bit
  /// cells (tensor memory).
  explicit UnionMemory(pk::RefType buffer);

  /// The elements of the Ref of `type` at `offset` (bytes, or columns):
  /// one Tensor however many threads evaluate the op, made current.
  TensorPtr member(int64_t offset, pk::RefType type);

  /// Makes `member`'s elements current, before an op reads or writes them.
  void touch(Tensor &member);

private:
  struct Member {
    TensorPtr data;
    int64_t offset = 0, elementBytes = 1, columns = 0;
    int64_t first = 0, end = 0; ///< the bytes of the image it spans
    bool current = false;
  };
  /// Where element `k` of `m` starts in the image.
  int64_t byteOf(const Member &m, int64_t k) const;
  void flush(const Member &m);
  void load(Member &m);

  bool tensorMemory;
  int64_t columns = 0; ///< tensor memory: the buffer's columns
  std::vector<uint8_t> image, known;
  std::vector<Member> members;
  std::map<std::pair<int64_t, const void *>, size_t> byPlace;
};

} // namespace pk::interp

#endif // PK_INTERPRETER_UNIONMEMORY_H

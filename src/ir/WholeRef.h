//===- WholeRef.h - Loads and stores of a whole Ref -------------*- C++ -*-===//
//
// Generated kernels (array code at export level) read each input Ref whole
// and write each output Ref whole; the passes that fuse them and the CUDA
// backend that turns some into buffer views recognize these accesses.
//
//===----------------------------------------------------------------------===//
#ifndef PK_IR_WHOLEREF_H
#define PK_IR_WHOLEREF_H

#include "ir/PkDialect.h"

namespace pk {

/// Whether a window of `ref` is the whole Ref: no dynamic offsets, static
/// offsets 0, the Ref's sizes, unit strides, no squeezed axis. (`padded`
/// changes nothing then: it only concerns elements past the Ref's end.)
inline bool isWholeWindow(RefType ref, mlir::ValueRange offsets,
                          llvm::ArrayRef<int64_t> staticOffsets, llvm::ArrayRef<int64_t> sizes,
                          llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> squeeze) {
  return offsets.empty() && squeeze.empty() && sizes == ref.getShape() &&
         llvm::all_of(staticOffsets, [](int64_t o) { return o == 0; }) &&
         llvm::all_of(strides, [](int64_t s) { return s == 1; });
}

/// Whether `load` reads its whole Ref as one value, unmasked.
inline bool readsWholeRef(LoadOp load) {
  return !load.getMask() && !load.getOther() &&
         isWholeWindow(llvm::cast<RefType>(load.getRef().getType()), load.getOffsets(),
                       load.getStaticOffsets(), load.getSizes(), load.getStrides(),
                       load.getSqueeze());
}

/// Whether `store` writes its whole Ref with one value, unmasked.
inline bool writesWholeRef(StoreOp store) {
  return !store.getMask() &&
         isWholeWindow(llvm::cast<RefType>(store.getRef().getType()), store.getOffsets(),
                       store.getStaticOffsets(), store.getSizes(), store.getStrides(),
                       store.getSqueeze());
}

} // namespace pk

#endif // PK_IR_WHOLEREF_H

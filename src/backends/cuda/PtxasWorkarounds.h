//===- PtxasWorkarounds.h - PTX that ptxas compiles right -------*- C++ -*-===//
//
// Rewrites of PTX that LLVM's NVPTX back end writes correctly but that
// released versions of ptxas miscompile. Each names the fault, the
// versions seen with it, and its smallest reproducer, so that it can go
// once every supported ptxas is fixed.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_PTXASWORKAROUNDS_H
#define PK_BACKENDS_CUDA_PTXASWORKAROUNDS_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pk::gpu {

/// `ptx` with every workaround below applied.
std::string avoidPtxasMiscompiles(llvm::StringRef ptx);

/// ptxas 12.9 and 13.0 (13.2 is right) miscompile a packed 16-bit add,
/// `add.s16x2 %d, %a, %c`, whose `%c` holds a constant, when only one half
/// of `%d` is read after it: the narrowed `VIADD.16x2` adds 0 in place of
/// that half of the constant. Reproducer (sm_90a; SASS `VIADD.16x2 R0,
/// R2, 0x0`, the subtraction of 188 gone):
///
///   ld.global.b32 %r3, [%rd1];
///   mov.b32 %r17, -12255420;          // 0xff44ff44: -188 in both halves
///   add.s16x2 %r19, %r3, %r17;
///   mov.b32 {%rs11, %rs12}, %r19;
///   st.global.b16 [%rd7], %rs11;
///
/// Each `add.{s,u}16x2` becomes, in a scope of its own, two 16-bit adds
/// of the unpacked halves and a pack; ptxas compiles these to one IADD3
/// per half and does not fuse them back. LLVM makes these adds for
/// 16-bit integer vectors on sm_90 only.
std::string splitPackedIntegerAdds(llvm::StringRef ptx);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_PTXASWORKAROUNDS_H

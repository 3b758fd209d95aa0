//===- PtxasWorkarounds.cpp - PTX that ptxas compiles right ---------------===//
#include "backends/cuda/PtxasWorkarounds.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Regex.h"

namespace pk::gpu {

std::string splitPackedIntegerAdds(llvm::StringRef ptx) {
  // LLVM writes one instruction a line: indent, an optional guard, the
  // add, its three registers.
  const llvm::Regex packedAdd("^([ \t]*)(@!?%[A-Za-z0-9_$]+[ \t]+)?add\\.[su]16x2[ \t]+"
                              "(%[A-Za-z0-9_$]+),[ \t]*(%[A-Za-z0-9_$]+),[ \t]*"
                              "(%[A-Za-z0-9_$]+);[ \t]*$");
  llvm::SmallVector<llvm::StringRef> lines;
  ptx.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  std::string out;
  out.reserve(ptx.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i)
      out += '\n';
    llvm::SmallVector<llvm::StringRef, 6> m;
    if (!lines[i].contains("16x2") || !packedAdd.match(lines[i], &m)) {
      out += lines[i];
      continue;
    }
    std::string indent = m[1].str(), guard = m[2].str();
    // The halves are read before %d is written, so %d may be %a or %c.
    out += indent + "{\n";
    out += indent + ".reg .b16 %pk_half<4>;\n";
    out += indent + "mov.b32 {%pk_half0, %pk_half1}, " + m[4].str() + ";\n";
    out += indent + "mov.b32 {%pk_half2, %pk_half3}, " + m[5].str() + ";\n";
    out += indent + "add.s16 %pk_half0, %pk_half0, %pk_half2;\n";
    out += indent + "add.s16 %pk_half1, %pk_half1, %pk_half3;\n";
    out += indent + guard + "mov.b32 " + m[3].str() + ", {%pk_half0, %pk_half1};\n";
    out += indent + "}";
  }
  return out;
}

std::string avoidPtxasMiscompiles(llvm::StringRef ptx) { return splitPackedIntegerAdds(ptx); }

} // namespace pk::gpu

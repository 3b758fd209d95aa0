//===- EvalPrintf.cpp - gpu.printf on the simulator ------------------------===//
//
// Each active thread prints its line, formatted as CUDA's printf formats it
// (the C conversions; %f and friends take the value as a double, as
// vprintf's promotion does).
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/sim/Executor.h"
#include "backends/cuda/sim/Numerics.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>

namespace pk::sim {

void Executor::evalPrintf(const Instr &instr, const Mask &mask) {
  const std::string &format = k.strings[static_cast<size_t>(instr.imm)];
  for (uint16_t t : mask) {
    std::string out;
    size_t arg = 0;
    for (size_t i = 0; i < format.size(); ++i) {
      if (format[i] != '%') {
        out += format[i];
        continue;
      }
      if (i + 1 < format.size() && format[i + 1] == '%') {
        out += '%';
        ++i;
        continue;
      }
      size_t end = format.find_first_of("diouxXeEfFgGcs", i + 1);
      if (end == std::string::npos || arg >= instr.in.size()) {
        out += format.substr(i);
        break;
      }
      std::string spec = format.substr(i, end - i + 1);
      auto kind = static_cast<Kind>(instr.list[arg]);
      uint64_t word = reg(instr.in[arg])[t];
      ++arg;
      char buffer[256];
      if (isFloatKind(kind)) {
        std::snprintf(buffer, sizeof buffer, spec.c_str(), floatWordToDouble(kind, word));
      } else {
        // Integer conversions: widen to 64 bits as the length modifier asks.
        std::string wide = spec;
        wide.erase(std::remove(wide.begin(), wide.end(), 'l'), wide.end());
        wide.insert(wide.size() - 1, "ll");
        bool isSigned = spec.back() == 'd' || spec.back() == 'i';
        unsigned bits = bitsOf(kind);
        if (isSigned)
          std::snprintf(buffer, sizeof buffer, wide.c_str(),
                        static_cast<long long>(signExtend(word, bits)));
        else
          std::snprintf(buffer, sizeof buffer, wide.c_str(),
                        static_cast<unsigned long long>(word & widthMask(bits)));
      }
      out += buffer;
      i = end;
    }
    llvm::outs() << out;
  }
  llvm::outs().flush();
}

} // namespace pk::sim

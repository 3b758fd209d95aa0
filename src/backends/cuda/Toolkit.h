//===- Toolkit.h - The CUDA toolkit pkc uses ---------------------*- C++ -*-===//
//
// pkc needs two things from the CUDA toolkit: libdevice (the math
// functions, linked into the LLVM module before PTX is made) and ptxas
// (PTX to cubin). It finds the toolkit at $PK_CUDA_PATH, $CUDA_PATH,
// $CUDA_HOME, /usr/local/cuda, or from ptxas on $PATH (and libdevice also
// where Debian's nvidia-cuda-toolkit puts it).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_TOOLKIT_H
#define PK_BACKENDS_CUDA_TOOLKIT_H

#include <optional>
#include <string>

namespace pk::gpu {

struct Toolkit {
  std::string root;  ///< the toolkit directory, or empty
  std::string ptxas; ///< path to ptxas, or empty
  /// The directory holding nvvm/libdevice/libdevice.10.bc, or empty.
  std::string libdeviceRoot;
};

Toolkit findToolkit();

/// What ptxas made of a PTX module.
struct PtxasResult {
  std::string cubin;
  std::string log;     ///< ptxas's stderr (-v info, warnings)
  std::string command; ///< the command line, for messages
  int exitCode = 0;
  std::string error; ///< set when ptxas could not run or failed
};

PtxasResult runPtxas(const Toolkit &toolkit, const std::string &ptx, const std::string &arch);

/// Per-kernel resource usage from ptxas -v output.
struct KernelResources {
  unsigned registers = 0;
  uint64_t spillStores = 0, spillLoads = 0, stackFrame = 0, sharedStatic = 0;
};
std::optional<KernelResources> kernelResources(const std::string &log, const std::string &kernel);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_TOOLKIT_H

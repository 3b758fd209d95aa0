//===- Toolkit.h - The CUDA toolkit pkc uses ---------------------*- C++ -*-===//
//
// pkc needs two things from the CUDA toolkit: libdevice (the math
// functions, linked into the LLVM module before PTX is made) and ptxas
// (PTX to cubin). It finds the toolkit at $PK_CUDA_PATH, $CUDA_PATH,
// $CUDA_HOME, /usr/local/cuda, or from ptxas on $PATH (and libdevice also
// where Debian's nvidia-cuda-toolkit puts it); failing those, in the
// packages PyPI's nvidia-cuda-nvcc and nvidia-nvvm install for Python
// (scripts/setup.sh installs them on machines without a toolkit).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_TOOLKIT_H
#define PK_BACKENDS_CUDA_TOOLKIT_H

#include <optional>
#include <string>
#include <vector>

namespace pk::gpu {

struct Toolkit {
  std::string root;  ///< the toolkit directory, or empty
  std::string ptxas; ///< path to ptxas, or empty
  /// The directory holding nvvm/libdevice/libdevice.10.bc, or empty.
  std::string libdeviceRoot;
};

/// Where findToolkit looks, in order.
struct ToolkitSearch {
  /// Toolkit directories: <root>/bin/ptxas, <root>/nvvm/libdevice.
  std::vector<std::string> roots;
  /// Then ptxas on $PATH (its toolkit is the directory above bin/).
  bool searchPath = true;
  /// More places libdevice may be (Debian's).
  std::vector<std::string> libdeviceRoots;
  /// Then the PyPI packages this Python sees; empty: none.
  std::string python;

  /// $PK_CUDA_PATH, $CUDA_PATH, $CUDA_HOME, /usr/local/cuda; $PATH;
  /// /usr/lib/nvidia-cuda-toolkit; $PK_PYTHON, else python3 on $PATH.
  static ToolkitSearch fromEnvironment();
};

Toolkit findToolkit(const ToolkitSearch &search = ToolkitSearch::fromEnvironment());

/// The toolkit directories PyPI's CUDA packages installed for `python`:
/// each directory under the `nvidia` namespace package (nvidia/cu13 from
/// nvidia-cuda-nvcc 13, nvidia/cuda_nvcc from nvidia-cuda-nvcc-cu12) that
/// holds bin/ptxas or nvvm/libdevice. Empty when Python or the packages
/// are missing.
std::vector<std::string> pipToolkitRoots(const std::string &python);

/// What ptxas made of a PTX module.
struct PtxasResult {
  std::string cubin;
  std::string log;     ///< ptxas's stderr (-v info, warnings)
  std::string command; ///< the command line, for messages
  int exitCode = 0;
  std::string error; ///< set when ptxas could not run or failed
};

/// Assembles and links PTX modules into one cubin (ptxas takes several
/// files as it takes one module's kernels).
PtxasResult runPtxas(const Toolkit &toolkit, const std::vector<std::string> &ptx,
                     const std::string &arch);

/// Per-kernel resource usage from ptxas -v output.
struct KernelResources {
  unsigned registers = 0;
  uint64_t spillStores = 0, spillLoads = 0, stackFrame = 0, sharedStatic = 0;
};
std::optional<KernelResources> kernelResources(const std::string &log, const std::string &kernel);
/// ptxas's "Potential Performance Loss" remarks in `log`, without the
/// "ptxas info    : " prefix, in order.
std::vector<std::string> performanceNotes(const std::string &log);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_TOOLKIT_H

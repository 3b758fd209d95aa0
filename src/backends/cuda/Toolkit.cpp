//===- Toolkit.cpp --------------------------------------------------------===//
#include "backends/cuda/Toolkit.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdlib>
#include <regex>

namespace pk::gpu {

ToolkitSearch ToolkitSearch::fromEnvironment() {
  ToolkitSearch search;
  for (const char *variable : {"PK_CUDA_PATH", "CUDA_PATH", "CUDA_HOME"})
    if (const char *root = std::getenv(variable); root && *root)
      search.roots.push_back(root);
  search.roots.push_back("/usr/local/cuda");
  search.libdeviceRoots.push_back("/usr/lib/nvidia-cuda-toolkit");
  if (const char *python = std::getenv("PK_PYTHON"); python && *python)
    search.python = python;
  else if (auto python = llvm::sys::findProgramByName("python3"))
    search.python = *python;
  return search;
}

std::vector<std::string> pipToolkitRoots(const std::string &python) {
  std::vector<std::string> roots;
  if (python.empty())
    return roots;
  llvm::SmallString<128> output;
  if (llvm::sys::fs::createTemporaryFile("pkc-nvidia", "txt", output))
    return roots;
  // The `nvidia` namespace package's directories, one per line.
  std::vector<llvm::StringRef> args = {python, "-c",
                                       "import nvidia; print(\"\\n\".join(nvidia.__path__))"};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(output),
                                                llvm::StringRef("")};
  int exitCode = llvm::sys::ExecuteAndWait(python, args, std::nullopt, redirects,
                                           /*secondsToWait=*/60);
  auto buffer = llvm::MemoryBuffer::getFile(output);
  llvm::sys::fs::remove(output);
  if (exitCode != 0 || !buffer)
    return roots;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(line.trim(), ec), end; it != end && !ec;
         it.increment(ec)) {
      llvm::SmallString<256> ptxas(it->path()), libdevice(it->path());
      llvm::sys::path::append(ptxas, "bin", "ptxas");
      llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
      if (llvm::sys::fs::can_execute(ptxas) || llvm::sys::fs::is_regular_file(libdevice))
        roots.push_back(it->path());
    }
  }
  std::sort(roots.begin(), roots.end());
  return roots;
}

Toolkit findToolkit(const ToolkitSearch &search) {
  Toolkit t;
  auto tryRoot = [&](llvm::StringRef root) {
    if (root.empty() || !t.root.empty())
      return;
    llvm::SmallString<256> ptxas(root);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(ptxas)) {
      t.root = root.str();
      t.ptxas = ptxas.str().str();
    }
  };
  for (const std::string &root : search.roots)
    tryRoot(root);
  if (t.root.empty() && search.searchPath)
    if (auto ptxas = llvm::sys::findProgramByName("ptxas")) {
      t.ptxas = *ptxas;
      // <root>/bin/ptxas
      t.root = llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas)).str();
    }
  auto tryLibdevice = [&](llvm::StringRef root) {
    if (root.empty() || !t.libdeviceRoot.empty())
      return;
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::is_regular_file(path))
      t.libdeviceRoot = root.str();
  };
  tryLibdevice(t.root);
  for (const std::string &root : search.roots)
    tryLibdevice(root);
  for (const std::string &root : search.libdeviceRoots)
    tryLibdevice(root);
  // Last, PyPI's packages: only asked for when something is missing, as it
  // runs Python.
  if (t.root.empty() || t.libdeviceRoot.empty())
    for (const std::string &root : pipToolkitRoots(search.python)) {
      tryRoot(root);
      tryLibdevice(root);
    }
  return t;
}

PtxasResult runPtxas(const Toolkit &toolkit, const std::vector<std::string> &ptx,
                     const std::string &arch) {
  PtxasResult r;
  if (toolkit.ptxas.empty()) {
    r.error = "ptxas was not found: install the CUDA toolkit (or PyPI's nvidia-cuda-nvcc, which "
              "scripts/setup.sh installs), or point PK_CUDA_PATH (or CUDA_PATH) at it; "
              "--emit=ptx works without it";
    return r;
  }
  std::vector<llvm::SmallString<128>> inputs(ptx.size());
  llvm::SmallString<128> output, log;
  auto removeAll = [&] {
    for (const auto &input : inputs)
      if (!input.empty())
        llvm::sys::fs::remove(input);
    llvm::sys::fs::remove(output);
    llvm::sys::fs::remove(log);
  };
  for (size_t i = 0; i < ptx.size(); ++i) {
    int fd;
    if (llvm::sys::fs::createTemporaryFile("pkc", "ptx", fd, inputs[i])) {
      r.error = "cannot create temporary files for ptxas";
      removeAll();
      return r;
    }
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << ptx[i];
  }
  if (llvm::sys::fs::createTemporaryFile("pkc", "cubin", output) ||
      llvm::sys::fs::createTemporaryFile("pkc", "log", log)) {
    r.error = "cannot create temporary files for ptxas";
    removeAll();
    return r;
  }
  // ptxas compiles a module's kernels on up to 4 threads (a third less
  // wall time for a file of many kernels on 2 cores). The count is fixed,
  // not the machine's: the cubin's layout depends on it, and compiling
  // the same input must give the same bytes everywhere.
  std::vector<std::string> args = {toolkit.ptxas, "-arch=" + arch, "-O3", "-v", "-split-compile=4"};
  for (const auto &input : inputs)
    args.push_back(input.str().str());
  args.push_back("-o");
  args.push_back(output.str().str());
  for (const std::string &a : args)
    r.command += (r.command.empty() ? "" : " ") + a;
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string message;
  r.exitCode = llvm::sys::ExecuteAndWait(toolkit.ptxas, argRefs, std::nullopt, redirects,
                                         /*secondsToWait=*/300, 0, &message);
  if (auto buffer = llvm::MemoryBuffer::getFile(log))
    r.log = (*buffer)->getBuffer().str();
  if (r.exitCode != 0) {
    r.error = "ptxas failed (exit code " + std::to_string(r.exitCode) + "): " + r.command + "\n" +
              (message.empty() ? "" : message + "\n") + r.log;
  } else if (auto buffer = llvm::MemoryBuffer::getFile(output, /*IsText=*/false)) {
    r.cubin = (*buffer)->getBuffer().str();
  } else {
    r.error = "ptxas wrote no cubin: " + r.command;
  }
  removeAll();
  return r;
}

std::optional<KernelResources> kernelResources(const std::string &log, const std::string &kernel) {
  // ptxas info    : Compiling entry function 'k' for 'sm_90a'
  // ptxas info    : Function properties for k
  //     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 26 registers, used 0 barriers, 384 bytes cmem[0]
  size_t at = log.find("Compiling entry function '" + kernel + "'");
  if (at == std::string::npos)
    return std::nullopt;
  size_t end = log.find("Compiling entry function", at + 1);
  std::string section = log.substr(at, end == std::string::npos ? std::string::npos : end - at);
  KernelResources k;
  std::smatch m;
  if (std::regex_search(section, m, std::regex(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    k.stackFrame = std::stoull(m[1]);
    k.spillStores = std::stoull(m[2]);
    k.spillLoads = std::stoull(m[3]);
  }
  if (std::regex_search(section, m, std::regex(R"(Used (\d+) registers)")))
    k.registers = static_cast<unsigned>(std::stoul(m[1]));
  if (std::regex_search(section, m, std::regex(R"((\d+) bytes smem)")))
    k.sharedStatic = std::stoull(m[1]);
  return k;
}

std::vector<std::string> performanceNotes(const std::string &log) {
  // ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async
  // instructions are serialized due to ... in the function 'k'
  std::vector<std::string> notes;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(log).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.contains("Potential Performance Loss"))
      continue;
    size_t colon = line.find(": ");
    if (line.starts_with("ptxas") && colon != llvm::StringRef::npos)
      line = line.substr(colon + 2);
    notes.push_back(line.trim().str());
  }
  return notes;
}

} // namespace pk::gpu

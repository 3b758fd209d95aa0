//===- ToolkitTest.cpp - Finding ptxas and libdevice ----------------------===//
//
// On machines without a CUDA toolkit, pkc uses the ptxas and libdevice
// that PyPI's nvidia-cuda-nvcc and nvidia-nvvm install for Python
// (scripts/setup.sh installs them). The search runs here with no toolkit
// directory and no $PATH lookup, so that only the PyPI packages can be
// found, whatever else the machine has.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Toolkit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <gtest/gtest.h>

using pk::gpu::findToolkit;
using pk::gpu::pipToolkitRoots;
using pk::gpu::Toolkit;
using pk::gpu::ToolkitSearch;

namespace {

TEST(Toolkit, FindsPyPIsPackagesWhenNothingElseIsThere) {
  ToolkitSearch search = ToolkitSearch::fromEnvironment();
  if (search.python.empty() || pipToolkitRoots(search.python).empty())
    GTEST_SKIP() << "PyPI's nvidia-cuda-nvcc is not installed for " << search.python;
  search.roots.clear();
  search.searchPath = false;
  search.libdeviceRoots.clear();
  Toolkit t = findToolkit(search);
  ASSERT_FALSE(t.ptxas.empty());
  EXPECT_TRUE(llvm::sys::fs::can_execute(t.ptxas)) << t.ptxas;
  // site-packages/nvidia/<dir>/bin/ptxas
  EXPECT_EQ(llvm::sys::path::filename(llvm::sys::path::parent_path(
                llvm::sys::path::parent_path(llvm::sys::path::parent_path(t.ptxas)))),
            "nvidia")
      << t.ptxas;
  ASSERT_FALSE(t.libdeviceRoot.empty());
  llvm::SmallString<256> libdevice(t.libdeviceRoot);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  EXPECT_TRUE(llvm::sys::fs::is_regular_file(libdevice)) << libdevice.str().str();
}

TEST(Toolkit, NothingWithoutPython) {
  ToolkitSearch search;
  search.searchPath = false;
  Toolkit t = findToolkit(search);
  EXPECT_TRUE(t.root.empty());
  EXPECT_TRUE(t.ptxas.empty());
  EXPECT_TRUE(t.libdeviceRoot.empty());
  EXPECT_TRUE(pipToolkitRoots("/nonexistent/python3").empty());
}

TEST(Toolkit, TheGivenRootComesFirst) {
  // A directory with bin/ptxas is taken as the toolkit, before anything
  // the environment names.
  llvm::SmallString<128> root;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("pkc-toolkit", root));
  llvm::SmallString<128> bin(root), ptxas;
  llvm::sys::path::append(bin, "bin");
  ASSERT_FALSE(llvm::sys::fs::create_directories(bin));
  ptxas = bin;
  llvm::sys::path::append(ptxas, "ptxas");
  {
    int fd;
    ASSERT_FALSE(llvm::sys::fs::openFileForWrite(ptxas, fd));
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  ASSERT_FALSE(
      llvm::sys::fs::setPermissions(ptxas, llvm::sys::fs::all_exe | llvm::sys::fs::owner_all));
  ToolkitSearch search = ToolkitSearch::fromEnvironment();
  search.roots.insert(search.roots.begin(), root.str().str());
  Toolkit t = findToolkit(search);
  EXPECT_EQ(t.root, root.str().str());
  EXPECT_EQ(t.ptxas, ptxas.str().str());
  llvm::sys::fs::remove_directories(root);
}

} // namespace

// ptxas's log as it writes it for sm_90a: a module-wide remark first, a
// remark naming its kernel, then the per-kernel sections.
TEST(Toolkit, ReadsPerformanceRemarksAndResourcesFromThePtxasLog) {
  std::string log =
      "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to "
      "determine register count at entry.\n"
      "ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are "
      "serialized due to program dependence on compiler-inserted WG.AR in divergent path in the "
      "function 'k'\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 16 barriers\n"
      "ptxas info    : Compiling entry function 'j' for 'sm_90a'\n"
      "ptxas info    : Function properties for j\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 26 registers, used 0 barriers, 384 bytes cmem[0]\n";
  std::vector<std::string> notes = pk::gpu::performanceNotes(log);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "(C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to "
                      "determine register count at entry.");
  EXPECT_EQ(notes[1].rfind("(C7520) Potential Performance Loss: wgmma.mma_async", 0), 0u);
  EXPECT_NE(notes[1].find("in the function 'k'"), std::string::npos);

  std::optional<pk::gpu::KernelResources> k = pk::gpu::kernelResources(log, "k");
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->registers, 168u);
  EXPECT_EQ(k->stackFrame, 8u);
  EXPECT_EQ(k->spillStores, 4u);
  EXPECT_EQ(k->spillLoads, 12u);
  std::optional<pk::gpu::KernelResources> j = pk::gpu::kernelResources(log, "j");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->registers, 26u);
  EXPECT_EQ(j->spillStores, 0u);
  EXPECT_FALSE(pk::gpu::kernelResources(log, "missing").has_value());
  EXPECT_TRUE(pk::gpu::performanceNotes("ptxas info    : 0 bytes gmem\n").empty());
}

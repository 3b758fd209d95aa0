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

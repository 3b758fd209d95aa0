//===- Arguments.cpp ------------------------------------------------------===//
#include "Arguments.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

namespace pk::cli {

bool normalizeArguments(int argc, char **argv, std::vector<std::string> &out, std::string &error) {
  llvm::BumpPtrAllocator allocator;
  llvm::SmallVector<const char *, 64> args(argv, argv + argc);
  llvm::cl::ExpansionContext expansion(allocator, llvm::cl::TokenizeGNUCommandLine);
  expansion.setRelativeNames(true);
  if (llvm::Error e = expansion.expandResponseFiles(args)) {
    error = llvm::toString(std::move(e));
    return false;
  }
  out.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    // LLVM leaves an @file it cannot find as it is (as GCC does); pkc has
    // no arguments that start with '@', so that is an error here.
    if (i > 0 && arg.starts_with("@") && arg.size() > 1 &&
        !llvm::sys::fs::exists(arg.drop_front())) {
      error = "cannot read response file '" + arg.drop_front().str() + "': no such file";
      return false;
    }
    if (arg == "-MD") {
      out.push_back("--MD");
    } else if ((arg.starts_with("-MF") || arg.starts_with("-MT")) && i > 0) {
      out.push_back("--" + arg.substr(1, 2).str());
      if (arg.size() > 3)
        out.push_back(arg.drop_front(3).str());
    } else {
      out.push_back(arg.str());
    }
  }
  return true;
}

} // namespace pk::cli

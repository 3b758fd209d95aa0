//===- ImportPath.h - Finding the .pk files a module imports ----*- C++ -*-===//
//
// `from kernels.common import gelu` names kernels/common.pk in one of the
// import path's directories: the directory of the file being compiled
// (as Python puts the script's directory first on sys.path), then each -I
// directory in order. The first that has the file wins. A relative import
// (`from .common import gelu`) looks next to the importing file instead.
//
// Every file is read and parsed once per session, however it is spelled:
// files are identified by device and inode, so `a/../k.pk` and `k.pk` are
// one module, and an import of the file being compiled is recognized as a
// cycle by the elaborator.
//
//===----------------------------------------------------------------------===//
#ifndef PK_DRIVER_IMPORTPATH_H
#define PK_DRIVER_IMPORTPATH_H

#include "frontend/elab/Elaborate.h"

#include "llvm/Support/FileSystem/UniqueID.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pk {

class ImportPath : public ImportLoader {
public:
  /// `read` registers a file with the session's SourceManager (0 with an
  /// error reported when it cannot).
  ImportPath(std::vector<std::string> directories,
             std::function<uint32_t(const std::string &)> read, DiagnosticEngine &diagnostics);

  /// Parses `path`, or returns the module parsed from the same file before.
  Result parseFile(const std::string &path);

  Result load(const std::string &dottedName) override;
  Result loadRelative(const std::string &importer, unsigned level, const std::string &dottedName,
                      std::string &where) override;
  std::string describePath() const override;

private:
  /// `directory`/a/b.pk for a.b, parsed, if that file exists.
  Result loadFrom(const std::string &directory, const std::string &dottedName);

  std::vector<std::string> directories;
  std::function<uint32_t(const std::string &)> read;
  DiagnosticEngine &diagnostics;
  struct Parsed {
    std::unique_ptr<ast::Module> module; ///< null when it did not parse
  };
  std::map<llvm::sys::fs::UniqueID, Parsed> parsed;
};

} // namespace pk

#endif // PK_DRIVER_IMPORTPATH_H

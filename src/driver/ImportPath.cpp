//===- ImportPath.cpp -----------------------------------------------------===//
#include "driver/ImportPath.h"

#include "frontend/parse/Parser.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>

namespace pk {

ImportPath::ImportPath(std::vector<std::string> directories,
                       std::function<uint32_t(const std::string &)> read,
                       DiagnosticEngine &diagnostics)
    : read(std::move(read)), diagnostics(diagnostics) {
  // -I of the file's own directory (as build systems add) searches it once.
  for (std::string &directory : directories)
    if (std::find(this->directories.begin(), this->directories.end(), directory) ==
        this->directories.end())
      this->directories.push_back(std::move(directory));
}

ImportLoader::Result ImportPath::parseFile(const std::string &path) {
  llvm::sys::fs::UniqueID id;
  if (llvm::sys::fs::getUniqueID(path, id)) {
    read(path); // reports why it cannot be read
    return Result{nullptr, true};
  }
  auto it = parsed.find(id);
  if (it == parsed.end()) {
    Parsed entry;
    if (uint32_t file = read(path))
      entry.module = parseModule(file, diagnostics);
    it = parsed.emplace(id, std::move(entry)).first;
  }
  Result result;
  result.module = it->second.module.get();
  result.failed = !result.module;
  return result;
}

ImportLoader::Result ImportPath::loadFrom(const std::string &directory,
                                          const std::string &dottedName) {
  llvm::SmallString<256> candidate(directory);
  for (llvm::StringRef rest = dottedName; !rest.empty();) {
    auto [part, tail] = rest.split('.');
    llvm::sys::path::append(candidate, part);
    rest = tail;
  }
  llvm::sys::path::remove_dots(candidate, /*remove_dot_dot=*/false);
  // `a/b.pk`, else the package `a/b/__init__.pk`, as Python looks.
  llvm::SmallString<256> package(candidate);
  candidate += ".pk";
  llvm::sys::path::append(package, "__init__.pk");
  for (const llvm::SmallString<256> &path : {candidate, package})
    if (llvm::sys::fs::is_regular_file(path))
      return parseFile(path.str().str());
  return Result{};
}

ImportLoader::Result ImportPath::load(const std::string &dottedName) {
  for (const std::string &directory : directories)
    if (Result found = loadFrom(directory, dottedName); found.module || found.failed)
      return found;
  return Result{};
}

ImportLoader::Result ImportPath::loadRelative(const std::string &importer, unsigned level,
                                              const std::string &dottedName, std::string &where) {
  // One dot is the importer's own directory; each further dot its parent.
  llvm::SmallString<256> directory(llvm::sys::path::parent_path(importer));
  if (directory.empty())
    directory = ".";
  for (unsigned i = 1; i < level; ++i)
    llvm::sys::path::append(directory, "..");
  where = directory.str().str();
  return loadFrom(where, dottedName);
}

std::string ImportPath::describePath() const {
  std::string text;
  for (const std::string &directory : directories)
    text += (text.empty() ? "" : ", ") + directory;
  return text;
}

} // namespace pk

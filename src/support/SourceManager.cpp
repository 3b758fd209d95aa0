//===- SourceManager.cpp --------------------------------------------------===//
#include "support/SourceManager.h"

#include <algorithm>
#include <cassert>
#include <fstream>

namespace pk {

SourceRange SourceRange::cover(SourceRange a, SourceRange b) {
  if (!a.isValid())
    return b;
  if (!b.isValid() || a.begin.file != b.begin.file)
    return a;
  auto before = [](SourceLocation x, SourceLocation y) {
    return x.line < y.line || (x.line == y.line && x.column < y.column);
  };
  SourceRange r = a;
  if (before(b.begin, r.begin))
    r.begin = b.begin;
  if (before(r.end, b.end))
    r.end = b.end;
  return r;
}

uint32_t SourceManager::addBuffer(std::string name, std::string contents) {
  // A UTF-8 byte-order mark is not part of the program (Python skips it too).
  if (contents.compare(0, 3, "\xEF\xBB\xBF") == 0)
    contents.erase(0, 3);
  auto file = std::make_unique<File>();
  file->name = std::move(name);
  file->contents = std::move(contents);
  file->lineStarts.push_back(0);
  const std::string &text = file->contents;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')))
      file->lineStarts.push_back(static_cast<uint32_t>(i + 1));
  }
  files.push_back(std::move(file));
  return static_cast<uint32_t>(files.size());
}

uint32_t SourceManager::addFile(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return 0;
  }
  std::string contents;
  char chunk[65536];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    contents.append(chunk, static_cast<size_t>(in.gcount()));
    if (contents.size() > kMaxFileBytes) {
      error = "'" + path + "' is larger than " + std::to_string(kMaxFileBytes >> 20) +
              " MiB; pkc reads source files up to that size";
      return 0;
    }
  }
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return 0;
  }
  return addBuffer(path, std::move(contents));
}

const SourceManager::File &SourceManager::get(uint32_t file) const {
  assert(file >= 1 && file <= files.size() && "invalid file id");
  return *files[file - 1];
}

const std::string &SourceManager::name(uint32_t file) const { return get(file).name; }

const std::string &SourceManager::contents(uint32_t file) const {
  return get(file).contents;
}

uint32_t SourceManager::lineCount(uint32_t file) const {
  return static_cast<uint32_t>(get(file).lineStarts.size());
}

std::string_view SourceManager::lineText(uint32_t file, uint32_t line) const {
  const File &f = get(file);
  if (line == 0 || line > f.lineStarts.size())
    return {};
  size_t begin = f.lineStarts[line - 1];
  size_t end = line < f.lineStarts.size() ? f.lineStarts[line] : f.contents.size();
  while (end > begin && (f.contents[end - 1] == '\n' || f.contents[end - 1] == '\r'))
    --end;
  return std::string_view(f.contents).substr(begin, end - begin);
}

SourceLocation SourceManager::locationOf(uint32_t file, size_t offset) const {
  const File &f = get(file);
  auto next = std::upper_bound(f.lineStarts.begin(), f.lineStarts.end(), offset);
  size_t line = static_cast<size_t>(next - f.lineStarts.begin());
  return {file, static_cast<uint32_t>(line), static_cast<uint32_t>(offset - *(next - 1) + 1)};
}

uint32_t SourceManager::findFile(std::string_view name) const {
  for (size_t i = 0; i < files.size(); ++i)
    if (files[i]->name == name)
      return static_cast<uint32_t>(i + 1);
  return 0;
}

} // namespace pk

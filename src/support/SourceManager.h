//===- SourceManager.h - Source files and positions in them -----*- C++ -*-===//
//
// Owns the text of every file pkc reads, so that diagnostics can quote the
// user's line long after parsing is over. Positions are 1-based line and
// column numbers, counted in bytes, as compilers print them.
//
//===----------------------------------------------------------------------===//
#ifndef PK_SUPPORT_SOURCEMANAGER_H
#define PK_SUPPORT_SOURCEMANAGER_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pk {

/// A point in a source file. `file == 0` means "no location".
struct SourceLocation {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t column = 0;

  bool isValid() const { return file != 0; }
};

/// A half-open span [begin, end) in one file.
struct SourceRange {
  SourceLocation begin;
  SourceLocation end;

  SourceRange() = default;
  SourceRange(SourceLocation begin, SourceLocation end) : begin(begin), end(end) {}
  bool isValid() const { return begin.isValid(); }
  /// The smallest range covering both.
  static SourceRange cover(SourceRange a, SourceRange b);
};

class SourceManager {
public:
  /// The largest source file pkc reads. Positions are 32-bit, and a .pk
  /// file this size is surely not a program.
  static constexpr size_t kMaxFileBytes = size_t(64) << 20;

  /// Registers a buffer and returns its file id (never 0).
  uint32_t addBuffer(std::string name, std::string contents);

  /// Reads a file from disk. Returns 0 and sets `error` when it cannot, or
  /// when it is larger than kMaxFileBytes.
  uint32_t addFile(const std::string &path, std::string &error);

  const std::string &name(uint32_t file) const;
  const std::string &contents(uint32_t file) const;
  /// The text of a 1-based line, without its line terminator.
  std::string_view lineText(uint32_t file, uint32_t line) const;
  uint32_t lineCount(uint32_t file) const;
  /// The line and (byte) column of a byte offset into the file's contents.
  SourceLocation locationOf(uint32_t file, size_t offset) const;
  /// Looks a file up by the name it was added under; 0 if unknown.
  uint32_t findFile(std::string_view name) const;

private:
  struct File {
    std::string name;
    std::string contents;
    std::vector<uint32_t> lineStarts;
  };
  std::vector<std::unique_ptr<File>> files;
  const File &get(uint32_t file) const;
};

} // namespace pk

#endif // PK_SUPPORT_SOURCEMANAGER_H

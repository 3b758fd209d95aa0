//===- Diagnostics.h - Errors that point at the user's line ----*- C++ -*-===//
//
// Every error pkc reports goes through a DiagnosticEngine, which prints it as
//
//   file:line:col: error: message
//   <the source line>
//   <a caret under the span>
//
// followed by any notes (a call site, a definition) in the same form.
//
//===----------------------------------------------------------------------===//
#ifndef PK_SUPPORT_DIAGNOSTICS_H
#define PK_SUPPORT_DIAGNOSTICS_H

#include "support/SourceManager.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace pk {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceRange range;
  std::string message;
  std::vector<Diagnostic> notes;

  Diagnostic() = default;
  Diagnostic(Severity severity, SourceRange range, std::string message)
      : severity(severity), range(range), message(std::move(message)) {}

  Diagnostic &addNote(SourceRange where, std::string text) {
    notes.emplace_back(Severity::Note, where, std::move(text));
    return *this;
  }
};

class DiagnosticEngine {
public:
  enum class Format { Text, Json };

  DiagnosticEngine(const SourceManager &sources, llvm::raw_ostream &os)
      : sources(sources), os(os) {}

  void setColor(bool enabled) { color = enabled; }
  void setFormat(Format f) { format = f; }

  void report(const Diagnostic &diagnostic);
  void error(SourceRange range, std::string message) {
    report(Diagnostic(Severity::Error, range, std::move(message)));
  }
  void warning(SourceRange range, std::string message) {
    report(Diagnostic(Severity::Warning, range, std::move(message)));
  }

  unsigned errorCount() const { return errors; }
  const SourceManager &sourceManager() const { return sources; }

  /// Renders one diagnostic (and its notes) the way report() prints it.
  std::string render(const Diagnostic &diagnostic) const;

private:
  void renderOne(llvm::raw_ostream &out, const Diagnostic &d) const;
  void renderJson(llvm::raw_ostream &out, const Diagnostic &d) const;

  const SourceManager &sources;
  llvm::raw_ostream &os;
  bool color = false;
  Format format = Format::Text;
  unsigned errors = 0;
};

} // namespace pk

#endif // PK_SUPPORT_DIAGNOSTICS_H

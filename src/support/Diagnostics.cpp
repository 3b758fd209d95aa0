//===- Diagnostics.cpp ----------------------------------------------------===//
#include "support/Diagnostics.h"
#include "support/Utf8.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace pk {
namespace {

const char *severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

llvm::raw_ostream::Colors severityColor(Severity s) {
  switch (s) {
  case Severity::Error:
    return llvm::raw_ostream::RED;
  case Severity::Warning:
    return llvm::raw_ostream::MAGENTA;
  case Severity::Note:
    return llvm::raw_ostream::BLACK;
  }
  return llvm::raw_ostream::RED;
}

void writeJsonString(llvm::raw_ostream &out, llvm::StringRef s) {
  out << '"';
  for (char c : s) {
    switch (c) {
    case '"':
      out << "\\\"";
      break;
    case '\\':
      out << "\\\\";
      break;
    case '\n':
      out << "\\n";
      break;
    case '\t':
      out << "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        out << llvm::format("\\u%04x", c);
      else
        out << c;
    }
  }
  out << '"';
}

} // namespace

void DiagnosticEngine::renderOne(llvm::raw_ostream &out, const Diagnostic &d) const {
  if (color)
    out.changeColor(llvm::raw_ostream::SAVEDCOLOR, /*bold=*/true);
  if (d.range.isValid())
    out << sources.name(d.range.begin.file) << ':' << d.range.begin.line << ':'
        << d.range.begin.column << ": ";
  else
    out << "pkc: ";
  if (color)
    out.changeColor(severityColor(d.severity), /*bold=*/true);
  out << severityName(d.severity) << ": ";
  if (color)
    out.changeColor(llvm::raw_ostream::SAVEDCOLOR, /*bold=*/true);
  out << d.message << '\n';
  if (color)
    out.resetColor();
  if (!d.range.isValid())
    return;

  // Bytes that are not UTF-8 print as '?', one for one, so that the caret
  // still lines up and the output stays text.
  std::string line =
      replaceInvalidUtf8(sources.lineText(d.range.begin.file, d.range.begin.line));
  if (line.empty() && d.range.begin.column <= 1)
    return;
  out << line << '\n';
  // The caret line copies tabs from the source so it lines up in a terminal.
  std::string caret;
  uint32_t column = d.range.begin.column == 0 ? 1 : d.range.begin.column;
  for (uint32_t i = 1; i < column && i - 1 < line.size(); ++i)
    caret += line[i - 1] == '\t' ? '\t' : ' ';
  caret += '^';
  uint32_t endColumn = column + 1;
  if (d.range.end.isValid()) {
    if (d.range.end.line == d.range.begin.line)
      endColumn = std::max(d.range.end.column, column + 1);
    else if (d.range.end.line > d.range.begin.line)
      endColumn = static_cast<uint32_t>(line.size()) + 1;
  }
  endColumn = std::min<uint32_t>(endColumn, static_cast<uint32_t>(line.size()) + 1);
  for (uint32_t c = column + 1; c < endColumn; ++c)
    caret += '~';
  if (color)
    out.changeColor(llvm::raw_ostream::GREEN, /*bold=*/true);
  out << caret;
  if (color)
    out.resetColor();
  out << '\n';
}

void DiagnosticEngine::renderJson(llvm::raw_ostream &out, const Diagnostic &d) const {
  out << "{\"severity\": \"" << severityName(d.severity) << "\"";
  if (d.range.isValid()) {
    out << ", \"file\": ";
    writeJsonString(out, sources.name(d.range.begin.file));
    out << ", \"line\": " << d.range.begin.line << ", \"column\": " << d.range.begin.column;
    if (d.range.end.isValid())
      out << ", \"end_line\": " << d.range.end.line << ", \"end_column\": " << d.range.end.column;
  }
  out << ", \"message\": ";
  writeJsonString(out, d.message);
  if (!d.notes.empty()) {
    out << ", \"notes\": [";
    for (size_t i = 0; i < d.notes.size(); ++i) {
      if (i)
        out << ", ";
      renderJson(out, d.notes[i]);
    }
    out << "]";
  }
  out << "}";
}

std::string DiagnosticEngine::render(const Diagnostic &diagnostic) const {
  std::string text;
  llvm::raw_string_ostream out(text);
  if (format == Format::Json) {
    renderJson(out, diagnostic);
    out << '\n';
    return text;
  }
  renderOne(out, diagnostic);
  for (const Diagnostic &note : diagnostic.notes)
    renderOne(out, note);
  return text;
}

void DiagnosticEngine::report(const Diagnostic &diagnostic) {
  if (diagnostic.severity == Severity::Error)
    ++errors;
  if (format == Format::Json) {
    os << render(diagnostic);
  } else {
    renderOne(os, diagnostic);
    for (const Diagnostic &note : diagnostic.notes)
      renderOne(os, note);
  }
  os.flush();
}

} // namespace pk

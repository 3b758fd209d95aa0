//===- DepFile.cpp --------------------------------------------------------===//
#include "DepFile.h"

namespace pk::cli {

namespace {

std::string escape(const std::string &path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#')
      out += '\\';
    if (c == '$')
      out += '$';
    out += c;
  }
  return out;
}

} // namespace

std::string formatDepFile(const std::vector<std::string> &targets,
                          const std::vector<std::string> &inputs) {
  std::string out;
  for (size_t i = 0; i < targets.size(); ++i)
    out += (i ? " " : "") + escape(targets[i]);
  out += ':';
  // One input per line keeps the file readable and diffs small.
  for (const std::string &input : inputs)
    out += " \\\n  " + escape(input);
  out += '\n';
  return out;
}

} // namespace pk::cli

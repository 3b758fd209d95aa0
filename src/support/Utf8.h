//===- Utf8.h - Where a byte string stops being UTF-8 -----------*- C++ -*-===//
//
// .pk files are bytes on disk and UTF-8 by definition (as Python source
// is). ANTLR decodes its input up front and throws on a malformed
// sequence, so the parser checks the text first and reports the first bad
// byte at its line; the diagnostic printer uses the same check to keep
// such bytes out of what it prints.
//
//===----------------------------------------------------------------------===//
#ifndef PK_SUPPORT_UTF8_H
#define PK_SUPPORT_UTF8_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pk {

/// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong
/// forms, no surrogates, nothing past U+10FFFF) that starts `text`, or 0
/// when `text` does not start with one.
size_t utf8SequenceLength(std::string_view text);

/// The offset of the first byte that is not part of a well-formed UTF-8
/// sequence, or nullopt when all of `text` is UTF-8.
std::optional<size_t> firstInvalidUtf8(std::string_view text);

/// `text` with each byte that is not part of a well-formed sequence
/// replaced by '?': one byte for one byte, so columns stay where they were.
std::string replaceInvalidUtf8(std::string_view text);

} // namespace pk

#endif // PK_SUPPORT_UTF8_H

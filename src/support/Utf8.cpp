//===- Utf8.cpp -----------------------------------------------------------===//
#include "support/Utf8.h"

namespace pk {

size_t utf8SequenceLength(std::string_view text) {
  if (text.empty())
    return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(0);
  if (lead < 0x80)
    return 1;
  // The allowed range of the second byte depends on the lead byte; that
  // is what rules out overlong forms, surrogates and code points past
  // U+10FFFF (RFC 3629, section 4).
  size_t length;
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0)
      low = 0xA0;
    else if (lead == 0xED)
      high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0)
      low = 0x90;
    else if (lead == 0xF4)
      high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high)
    return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF)
      return 0;
  return length;
}

std::optional<size_t> firstInvalidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    size_t length = utf8SequenceLength(text.substr(i));
    if (length == 0)
      return i;
    i += length;
  }
  return std::nullopt;
}

std::string replaceInvalidUtf8(std::string_view text) {
  std::string result(text);
  size_t i = 0;
  while (i < text.size()) {
    size_t length = utf8SequenceLength(text.substr(i));
    if (length == 0) {
      result[i] = '?';
      length = 1;
    }
    i += length;
  }
  return result;
}

} // namespace pk

//===- Npy.cpp ------------------------------------------------------------===//
#include "interpreter/Npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

namespace pk {

namespace {

/// Finds `'key':` in the header dict and returns the text after it.
std::optional<std::string> headerValue(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    at = header.find("\"" + key + "\"");
  if (at == std::string::npos)
    return std::nullopt;
  size_t colon = header.find(':', at);
  if (colon == std::string::npos)
    return std::nullopt;
  size_t begin = header.find_first_not_of(" ", colon + 1);
  if (begin == std::string::npos) // a key with nothing after its colon
    return std::nullopt;
  return header.substr(begin);
}

} // namespace

std::optional<HostArray> parseNpy(const std::string &bytes, std::optional<DType> expected,
                                  std::string &error) {
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || bytes.compare(0, 6, magic, 6) != 0) {
    error = "not a .npy file (bad magic string)";
    return std::nullopt;
  }
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      error = "truncated .npy header";
      return std::nullopt;
    }
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    error = "unsupported .npy version " + std::to_string(major);
    return std::nullopt;
  }
  if (headerStart + headerLength > bytes.size()) {
    error = "truncated .npy header";
    return std::nullopt;
  }
  std::string header = bytes.substr(headerStart, headerLength);

  std::optional<std::string> descrText = headerValue(header, "descr");
  std::optional<std::string> orderText = headerValue(header, "fortran_order");
  std::optional<std::string> shapeText = headerValue(header, "shape");
  if (!descrText || !orderText || !shapeText) {
    error = "malformed .npy header: " + header;
    return std::nullopt;
  }
  char quote = (*descrText)[0];
  size_t close = descrText->find(quote, 1);
  if ((quote != '\'' && quote != '"') || close == std::string::npos) {
    error = "unsupported .npy descr (structured arrays are not supported)";
    return std::nullopt;
  }
  std::string descr = descrText->substr(1, close - 1);
  std::optional<DType> dtype;
  if ((descr == "<V2" || descr == "|V2") && expected == DType::BF16)
    dtype = DType::BF16;
  else
    dtype = dtypeFromNpyDescr(descr);
  if (!dtype) {
    error = "unsupported .npy dtype '" + descr + "'" +
            (descr.size() && descr[0] == '>' ? " (big-endian data is not supported)" : "");
    return std::nullopt;
  }
  if (orderText->compare(0, 4, "True") == 0) {
    error = "Fortran-ordered .npy files are not supported; save a C-contiguous array";
    return std::nullopt;
  }
  std::vector<int64_t> shape;
  size_t open = shapeText->find('('), end = shapeText->find(')');
  if (open != 0 || end == std::string::npos) {
    error = "malformed .npy shape";
    return std::nullopt;
  }
  std::stringstream dims(shapeText->substr(1, end - 1));
  std::string item;
  while (std::getline(dims, item, ',')) {
    size_t first = item.find_first_not_of(' ');
    if (first == std::string::npos)
      continue;
    try {
      long long d = std::stoll(item.substr(first));
      if (d < 0)
        throw std::out_of_range("negative");
      shape.push_back(d);
    } catch (...) {
      error = "malformed .npy shape '" + shapeText->substr(0, end + 1) + "'";
      return std::nullopt;
    }
  }
  // The data must be there before the array is allocated: a short file
  // may claim any shape (a 100-byte file of shape (10**12,)).
  size_t dataStart = headerStart + headerLength;
  size_t available = bytes.size() > dataStart ? bytes.size() - dataStart : 0;
  uint64_t needed = byteWidth(*dtype);
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    needed = 0; // an empty array, whatever its other dimensions
  for (int64_t d : shape) {
    if (needed == 0)
      break;
    if (needed > available / static_cast<uint64_t>(d)) {
      needed = UINT64_MAX; // more than the file holds, however it multiplies out
      break;
    }
    needed *= static_cast<uint64_t>(d);
  }
  if (needed > available) {
    error = "truncated .npy data: the shape needs " +
            (needed == UINT64_MAX ? std::string("more") : std::to_string(needed)) +
            " bytes, the file has " + std::to_string(available);
    return std::nullopt;
  }
  HostArray array(*dtype, shape);
  if (array.byteSize() != 0) // memcpy wants real pointers even for 0 bytes
    std::memcpy(array.data(), bytes.data() + dataStart, array.byteSize());
  return array;
}

std::optional<HostArray> readNpy(const std::string &path, std::optional<DType> expected,
                                 std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return std::nullopt;
  }
  std::stringstream contents;
  contents << in.rdbuf();
  std::optional<HostArray> array = parseNpy(contents.str(), expected, error);
  if (!array)
    error = path + ": " + error;
  return array;
}

std::string serializeNpy(const HostArray &array) {
  std::string shape = "(";
  for (size_t i = 0; i < array.shape().size(); ++i)
    shape += std::to_string(array.shape()[i]) + ", ";
  if (array.shape().size() > 1)
    shape.erase(shape.size() - 2);
  else if (array.shape().size() == 1)
    shape.erase(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + dtypeInfo(array.dtype()).npyDescr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char *>(array.data()), array.byteSize());
  return out;
}

bool writeNpy(const std::string &path, const HostArray &array, std::string &error) {
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  std::string bytes = serializeNpy(array);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

} // namespace pk

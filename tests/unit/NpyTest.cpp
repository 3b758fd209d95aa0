//===- NpyTest.cpp - .npy reading and writing -----------------------------===//
#include "interpreter/Npy.h"

#include "gtest/gtest.h"

using pk::DType;
using pk::HostArray;

namespace {

std::string header(const std::string &dict) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64)
    h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h;
}

TEST(Npy, RoundTripsEveryDType) {
  for (DType t : pk::allDTypes) {
    HostArray a(t, {2, 3});
    for (int64_t i = 0; i < a.size(); ++i)
      a.setInt(i, i % 2);
    std::string error;
    std::optional<HostArray> b = pk::parseNpy(pk::serializeNpy(a), t, error);
    ASSERT_TRUE(b) << error;
    EXPECT_EQ(b->dtype(), t);
    EXPECT_EQ(b->shape(), a.shape());
    for (int64_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(b->getInt(i), a.getInt(i));
  }
}

TEST(Npy, HeaderIsAlignedAndReadableByNumpyConventions) {
  HostArray a(DType::F32, {4});
  std::string bytes = pk::serializeNpy(a);
  size_t headerLength = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + headerLength) % 64, 0u);
  EXPECT_NE(bytes.find("'shape': (4,)"), std::string::npos);
  EXPECT_NE(bytes.find("'descr': '<f4'"), std::string::npos);
  HostArray scalar(DType::I32, {});
  EXPECT_NE(pk::serializeNpy(scalar).find("'shape': ()"), std::string::npos);
}

TEST(Npy, ReadsFileWrittenByNumpy) {
  // np.save of np.array([[1, 2], [3, 4]], dtype=np.int16)
  std::string bytes = header("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }");
  for (int16_t v : {1, 2, 3, 4})
    bytes.append(reinterpret_cast<const char *>(&v), 2);
  std::string error;
  std::optional<HostArray> a = pk::parseNpy(bytes, std::nullopt, error);
  ASSERT_TRUE(a) << error;
  EXPECT_EQ(a->dtype(), DType::I16);
  EXPECT_EQ(a->getInt(3), 4);
}

TEST(Npy, RejectsWhatItCannotRead) {
  std::string error;
  EXPECT_FALSE(pk::parseNpy("not numpy", std::nullopt, error));
  EXPECT_NE(error.find("magic"), std::string::npos);
  EXPECT_FALSE(pk::parseNpy(header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") + "abcd",
                            std::nullopt, error));
  EXPECT_NE(error.find("big-endian"), std::string::npos);
  EXPECT_FALSE(pk::parseNpy(header("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }") + "abcd",
                            std::nullopt, error));
  EXPECT_NE(error.find("Fortran"), std::string::npos);
  EXPECT_FALSE(pk::parseNpy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }") + "abcd",
                            std::nullopt, error));
  EXPECT_NE(error.find("truncated"), std::string::npos);
  EXPECT_FALSE(pk::parseNpy(header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }") + "abcdabcd",
                            std::nullopt, error));
  EXPECT_NE(error.find("unsupported"), std::string::npos);
}

// Found by the npy fuzzer (fuzz/FuzzNpy.cpp): each used to crash pkc run --in.
TEST(Npy, MalformedHeadersAndHugeShapesAreErrors) {
  std::string error;
  // A key with nothing after its colon: substr(npos) threw out of parseNpy.
  EXPECT_FALSE(pk::parseNpy(header("{'descr': '<f4', 'fortran_order': False, 'shape':"),
                            std::nullopt, error));
  EXPECT_NE(error.find("malformed"), std::string::npos) << error;
  // A shape far beyond the file's bytes is refused before any allocation.
  EXPECT_FALSE(pk::parseNpy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }") +
                                "abcd",
                            std::nullopt, error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_FALSE(pk::parseNpy(header("{'descr': '<f8', 'fortran_order': False, "
                                   "'shape': (4294967296, 4294967296, 16), }"),
                            std::nullopt, error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  // An empty array has no data to copy.
  std::optional<HostArray> empty =
      pk::parseNpy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0, 5), }"), std::nullopt, error);
  ASSERT_TRUE(empty) << error;
  EXPECT_EQ(empty->size(), 0);
  // Empty, with other dimensions whose product overflows int64.
  std::optional<HostArray> huge = pk::parseNpy(
      header("{'descr': '<u2', 'fortran_order': False, 'shape': (2222222222, 222222222222222, 0), }"),
      std::nullopt, error);
  ASSERT_TRUE(huge) << error;
  EXPECT_EQ(huge->size(), 0);
}

TEST(Npy, OpaqueTwoByteReadsAsBFloat16) {
  std::string bytes = header("{'descr': '<V2', 'fortran_order': False, 'shape': (1,), }");
  uint16_t one = 0x3f80;
  bytes.append(reinterpret_cast<const char *>(&one), 2);
  std::string error;
  std::optional<HostArray> a = pk::parseNpy(bytes, std::nullopt, error);
  ASSERT_TRUE(a) << error;
  EXPECT_EQ(a->getDouble(0), 1.0);
}

} // namespace

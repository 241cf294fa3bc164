#include "compress/compressor.h"

#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"

namespace dynacomm::compress {
namespace {

TEST(NoCompression, RoundTripsBitForBitWithoutCopying) {
  auto c = make_compressor("none");
  EXPECT_EQ(c->name(), "none");
  EXPECT_TRUE(c->linear());
  const std::vector<float> v{1.5f, -0.0f, 3e-38f, 7.25f};
  EXPECT_EQ(c->encoded_bytes(4), 16u);
  std::vector<std::uint8_t> bytes(16);
  c->encode(0, v.data(), 4, bytes.data());
  std::vector<float> scratch;
  const float* out = c->decode(bytes.data(), bytes.size(), 4, scratch);
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(out), bytes.data()) << "copied";
  EXPECT_EQ(std::memcmp(out, v.data(), 16), 0);
  // Unaligned input is copied, not read misaligned.
  std::vector<std::uint8_t> shifted(17);
  std::memcpy(shifted.data() + 1, bytes.data(), 16);
  out = c->decode(shifted.data() + 1, 16, 4, scratch);
  EXPECT_EQ(std::memcmp(out, v.data(), 16), 0);
}

TEST(NoCompression, RefusesAPayloadOfTheWrongSize) {
  auto c = make_compressor("none");
  std::vector<float> scratch;
  std::uint8_t bytes[12] = {};
  EXPECT_THROW(c->decode(bytes, 12, 4, scratch), InvalidInput);
  EXPECT_THROW(c->decode(bytes, 12, -3, scratch), InvalidInput);
  EXPECT_THROW(make_compressor("zip"), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::compress

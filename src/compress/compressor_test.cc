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
  EXPECT_EQ(c->encoded_bytes(4, 0), 16u);
  std::vector<std::uint8_t> bytes(16);
  c->encode({}, v.data(), 4, bytes.data());
  std::vector<float> scratch;
  const float* out = c->decode({}, bytes.data(), bytes.size(), 4, scratch);
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(out), bytes.data()) << "copied";
  EXPECT_EQ(std::memcmp(out, v.data(), 16), 0);
  // Unaligned input is copied, not read misaligned.
  std::vector<std::uint8_t> shifted(17);
  std::memcpy(shifted.data() + 1, bytes.data(), 16);
  out = c->decode({}, shifted.data() + 1, 16, 4, scratch);
  EXPECT_EQ(std::memcmp(out, v.data(), 16), 0);
}

TEST(NoCompression, RefusesAPayloadOfTheWrongSize) {
  auto c = make_compressor("none");
  std::vector<float> scratch;
  std::uint8_t bytes[12] = {};
  EXPECT_THROW(c->decode({}, bytes, 12, 4, scratch), InvalidInput);
  EXPECT_THROW(c->decode({}, bytes, 12, -3, scratch), InvalidInput);
}

TEST(MakeCompressor, ParsesSpecsAndNamesWhatIsWrong) {
  EXPECT_EQ(make_compressor("topk")->name(), "topk:0.01,ef");
  EXPECT_EQ(make_compressor("topk:0.1,noef")->name(), "topk:0.1");
  EXPECT_EQ(make_compressor("qsgd")->name(), "qsgd:64");
  EXPECT_EQ(make_compressor("qsgd:4,ef")->name(), "qsgd:4,ef");
  EXPECT_EQ(make_compressor("onebit")->name(), "onebit,ef");
  EXPECT_EQ(make_compressor("efsignsgd")->name(), "efsignsgd,ef");
  EXPECT_EQ(make_compressor("signsgd")->name(), "signsgd");
  for (const MethodInfo& m : methods()) {  // a name() makes the same method again
    auto c = make_compressor(m.name);
    EXPECT_EQ(make_compressor(c->name())->name(), c->name());
  }
  auto message = [](const std::string& spec) {
    try {
      make_compressor(spec);
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("zip"),
            "unknown compression 'zip' (known: none, fp16, qsgd, terngrad, signsgd, efsignsgd, "
            "onebit, topk, randomk, dgc, powersgd (--arch allreduce))");
  EXPECT_EQ(message("topk:0"), "topk: the ratio must be in (0, 1], e.g. topk:0.01");
  EXPECT_EQ(message("topk:2"), "topk: the ratio must be in (0, 1], e.g. topk:0.01");
  EXPECT_EQ(message("topk:x"), "compression 'topk:x': 'x' is not a number");
  EXPECT_EQ(message("qsgd:2.5"),
            "qsgd: the levels must be a whole number in 1..65535, e.g. qsgd:64");
  EXPECT_EQ(message("fp16:3"), "compression 'fp16:3': fp16 takes no parameter");
  EXPECT_EQ(message("topk,maybe"), "compression 'topk,maybe': after the comma, ef or noef");
  EXPECT_EQ(message("none,ef"), "compression 'none,ef': none leaves nothing out to feed back");
  EXPECT_EQ(make_compressor("dgc")->name(), "dgc:0.001:200");
  EXPECT_EQ(make_compressor("dgc:0.01:0")->name(), "dgc:0.01:0");
  EXPECT_EQ(message("dgc,ef"),
            "compression 'dgc,ef': dgc accumulates what it leaves out itself (no ,ef)");
  EXPECT_EQ(message("dgc:0.01:2.5"),
            "dgc: the warm-up stage must be a whole number of iterations, e.g. dgc:0.001:200 (0: "
            "no warm-up)");
  EXPECT_EQ(message("topk:0.1:3"), "compression 'topk:0.1:3': topk takes at most 1 parameter(s)");
  EXPECT_EQ(message("dgc:0.1:"), "compression 'dgc:0.1:': '' is not a number");
  EXPECT_TRUE(moves_momentum("dgc"));
  EXPECT_TRUE(moves_momentum("dgc:0.01:0"));
  EXPECT_FALSE(moves_momentum("topk:0.01"));
  EXPECT_FALSE(moves_momentum("auto"));
}

// All-reduce sums the encodings of exactly the methods this names as they are: they must be
// linear, and float32 values (four bytes each) every worker places alike.
TEST(Registry, OnlyRandomKIsSummedAsItsDrawnValues) {
  for (const MethodInfo& m : methods()) {
    const bool summed = sums_selected_values(m.name);
    EXPECT_EQ(summed, m.name == "randomk") << m.name;
    if (!summed) continue;
    const std::unique_ptr<Compressor> c = make_compressor(m.name, 7);
    EXPECT_TRUE(c->linear());
    for (std::int64_t n : {1, 5, 100, 12345}) EXPECT_EQ(c->encoded_bytes(n, 3) % 4, 0u) << n;
  }
  EXPECT_TRUE(sums_selected_values("randomk:0.1,noef"));
  EXPECT_TRUE(sums_selected_values("randomk:1"));
  EXPECT_FALSE(sums_selected_values("randomkk:0.1"));
  EXPECT_FALSE(sums_selected_values("topk:0.01"));
}

}  // namespace
}  // namespace dynacomm::compress

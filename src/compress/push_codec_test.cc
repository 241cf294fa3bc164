#include "compress/push_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/error.h"

namespace dynacomm::compress {
namespace {

TEST(PushCodec, AutoListsDenseFp16AndTheNamedMethodsOnce) {
  EXPECT_TRUE(auto_methods("topk:0.01").empty());
  EXPECT_EQ(auto_methods("auto"), (std::vector<std::string>{"none", "fp16", "topk:0.01,ef"}));
  EXPECT_EQ(auto_methods("auto:qsgd:64+fp16+topk:0.05,noef"),
            (std::vector<std::string>{"none", "fp16", "qsgd:64", "topk:0.05"}));
  for (const char* bad : {"auto:", "auto:zip", "auto:topk:0.01++fp16", "auto:auto", "auto:topk:2"})
    EXPECT_THROW(auto_methods(bad), InvalidInput) << bad;
  EXPECT_THROW(PushCodec("zip"), InvalidInput);
}

TEST(PushCodec, OneMethodIsThatMethodsBytes) {
  PushCodec c("fp16");
  EXPECT_FALSE(c.mixed());
  EXPECT_EQ(c.wire_codec(), make_compressor("fp16")->wire_codec());
  EXPECT_EQ(c.encoded_bytes(0, 100, 0), 200u);
  std::vector<float> in{1.5f, -2}, scratch;
  std::vector<std::uint8_t> out(c.encoded_bytes(0, 2, 0));
  c.encode(0, {0, 0}, in.data(), 2, out.data());
  std::size_t used = 0;
  const float* v = c.decode({0, 0}, out.data(), out.size(), 2, scratch, used);
  EXPECT_EQ(used, 4u);
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[1], -2);
}

// Atoms of one push with different methods, back to back: each says its method and each
// decodes as its method; a bad index or a short payload is refused.
TEST(PushCodec, MixedAtomsCarryTheirMethod) {
  PushCodec enc("auto:topk:0.25,noef", 3), dec("auto:topk:0.25,noef", 3);
  ASSERT_TRUE(enc.mixed());
  EXPECT_EQ(enc.wire_codec(), kMixedCodec);
  ASSERT_EQ(enc.size(), 3u);
  std::vector<float> a{1, 2, 3, 4}, b{0.5f, -8, 0.25f, 1};
  const std::size_t na = enc.encoded_bytes(0, 4, 7), nb = enc.encoded_bytes(2, 4, 7);
  EXPECT_EQ(na, 17u);
  EXPECT_EQ(nb, 1 + make_compressor("topk:0.25,noef")->encoded_bytes(4, 7));
  std::vector<std::uint8_t> wire(na + nb);
  enc.encode(0, {0, 7}, a.data(), 4, wire.data());
  enc.encode(2, {1, 7}, b.data(), 4, wire.data() + na);
  std::vector<float> scratch;
  std::size_t used = 0;
  const float* v = dec.decode({0, 7}, wire.data(), wire.size(), 4, scratch, used);
  EXPECT_EQ(used, na);
  EXPECT_EQ(std::vector<float>(v, v + 4), a);
  v = dec.decode({1, 7}, wire.data() + na, wire.size() - na, 4, scratch, used);
  EXPECT_EQ(used, nb);
  EXPECT_EQ(std::vector<float>(v, v + 4), (std::vector<float>{0, -8, 0, 0}));
  EXPECT_THROW(dec.decode({1, 7}, wire.data() + na, nb - 1, 4, scratch, used), InvalidInput);
  EXPECT_THROW(dec.decode({1, 7}, wire.data(), 0, 4, scratch, used), InvalidInput);
  wire[0] = 3;
  EXPECT_THROW(dec.decode({0, 7}, wire.data(), wire.size(), 4, scratch, used), InvalidInput);
}

// Random bytes never crash a mixed decoder: they decode or are refused.
TEST(PushCodec, RandomBytesAreDecodedOrRefused) {
  PushCodec c("auto:qsgd:64+topk:0.1+onebit");
  std::mt19937 rng(11);
  std::vector<float> scratch;
  for (int t = 0; t < 20000; ++t) {
    std::vector<std::uint8_t> in(rng() % 64);
    for (auto& x : in) x = static_cast<std::uint8_t>(rng() % (t % 2 ? 8 : 256));
    std::size_t used = 0;
    try {
      c.decode({0, 0}, in.data(), in.size(), 1 + rng() % 20, scratch, used);
      EXPECT_LE(used, in.size());
    } catch (const InvalidInput&) {
    }
  }
}

TEST(PushCodec, SplitsABenchListKeepingErrorFeedbackWithItsMethod) {
  EXPECT_EQ(split_codec_list("none,fp16,topk:0.01,noef,auto,qsgd:64,ef"),
            (std::vector<std::string>{"none", "fp16", "topk:0.01,noef", "auto", "qsgd:64,ef"}));
  EXPECT_EQ(split_codec_list("auto:topk:0.01+onebit"),
            (std::vector<std::string>{"auto:topk:0.01+onebit"}));
  EXPECT_THROW(split_codec_list(""), InvalidInput);
  EXPECT_THROW(split_codec_list("ef"), InvalidInput);  // error feedback of nothing
  EXPECT_THROW(split_codec_list("fp16,,none"), InvalidInput);
  EXPECT_THROW(split_codec_list("fp16,fp16"), InvalidInput);
  EXPECT_THROW(split_codec_list("none,magic:3"), InvalidInput);
  EXPECT_THROW(split_codec_list("topk:0.01,ef,ef"), InvalidInput);
  // dgc moves the momentum to the workers: all units or none.
  EXPECT_THROW(PushCodec("auto:dgc"), InvalidInput);
  EXPECT_NO_THROW(PushCodec("dgc", 1, 0.9));
}

// A worker that stops takes its residuals along: a codec given the state encodes the next
// push as the one it came from would.
TEST(PushCodec, StateCarriesEveryMethodsResiduals) {
  std::vector<float> g(500);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = std::sin(0.37f * static_cast<float>(i));
  PushCodec a("auto:topk:0.05+onebit", 7);
  std::vector<std::uint8_t> out(2000);
  for (std::int64_t it = 0; it < 3; ++it)
    for (std::size_t k = 0; k < a.size(); ++k) a.encode(k, {1, it}, g.data(), 500, out.data());
  PushCodec b("auto:topk:0.05+onebit", 7);
  b.set_state(a.state());
  EXPECT_EQ(b.state(), a.state());
  std::vector<std::uint8_t> from_a(2000), from_b(2000);
  for (std::size_t k = 0; k < a.size(); ++k) {
    a.encode(k, {1, 3}, g.data(), 500, from_a.data());
    b.encode(k, {1, 3}, g.data(), 500, from_b.data());
    EXPECT_EQ(from_a, from_b) << k;
  }
  PushCodec other("topk:0.05", 7);
  EXPECT_THROW(other.set_state(a.state()), InvalidInput);  // four methods' states for one
  const std::string before = b.state();
  std::string spoiled = a.state();
  spoiled.resize(spoiled.size() - 3);
  EXPECT_THROW(b.set_state(spoiled), InvalidInput);
  EXPECT_EQ(b.state(), before);  // nothing changed
}

}  // namespace
}  // namespace dynacomm::compress

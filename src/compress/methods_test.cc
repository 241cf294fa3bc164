// Every method against what it claims: sizes, error bounds, unbiasedness, error feedback's
// invariant, and refusal of malformed payloads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "base/error.h"
#include "compress/compressor.h"
#include "compress/fp16.h"

namespace dynacomm::compress {
namespace {

std::vector<float> gradient(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> g(static_cast<std::size_t>(n));
  for (auto& x : g) x = normal(rng) * 1e-2f;
  return g;
}

std::vector<std::uint8_t> encode(Compressor& c, Slot slot, const std::vector<float>& g) {
  std::vector<std::uint8_t> out(
      c.encoded_bytes(static_cast<std::int64_t>(g.size()), slot.iteration));
  c.encode(slot, g.data(), static_cast<std::int64_t>(g.size()), out.data());
  return out;
}

std::vector<float> round_trip(Compressor& c, Slot slot, const std::vector<float>& g) {
  const std::vector<std::uint8_t> bytes = encode(c, slot, g);
  std::vector<float> scratch;
  const float* v =
      c.decode(slot, bytes.data(), bytes.size(), static_cast<std::int64_t>(g.size()), scratch);
  return std::vector<float>(v, v + g.size());
}

double norm2(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

TEST(Compression, EncodedSizesAreExact) {
  struct Case {
    std::string spec;
    std::int64_t n;
    std::size_t bytes;
  };
  for (const Case& c : std::vector<Case>{{"none", 1000, 4000},
                                         {"fp16", 1001, 2002},
                                         {"qsgd:64", 1000, 4 + 1000},      // 8 bits a value
                                         {"qsgd:4", 1000, 4 + 500},        // 1 + 3 bits
                                         {"qsgd:1", 9, 4 + 3},             // 2 bits: 18 bits
                                         {"terngrad", 1001, 4 + 251},      // 2 bits
                                         {"signsgd", 1001, 4 + 126},       // 1 bit
                                         {"onebit", 1001, 8 + 126},        // two means, 1 bit
                                         {"topk:0.01", 1000, 10 * 8},      // index and value
                                         {"topk:0.01", 10, 1 * 8},         // at least one
                                         {"topk:1", 7, 7 * 8},             // all of them
                                         {"randomk:0.01", 1000, 10 * 4},   // values only
                                         {"dgc:0.01:0", 1000, 10 * 8}}) {  // top-k's
    auto m = make_compressor(c.spec);
    EXPECT_EQ(m->encoded_bytes(c.n, 0), c.bytes) << c.spec;
    EXPECT_EQ(encode(*m, {2, 5}, gradient(c.n, 1)).size(), c.bytes) << c.spec;
  }
}

TEST(Compression, EachMethodStaysWithinItsErrorBound) {
  const std::vector<float> g = gradient(5000, 2);
  const double n2 = norm2(g);
  float amax = 0;
  double l1 = 0;
  for (float x : g) {
    amax = std::max(amax, std::fabs(x));
    l1 += std::fabs(x);
  }
  const auto scale = static_cast<float>(l1 / g.size());
  for (const std::string spec : {"fp16", "qsgd:64", "qsgd:4", "terngrad", "signsgd,noef",
                                 "onebit,noef", "topk:0.1,noef", "randomk:0.1,noef"}) {
    auto c = make_compressor(spec, 7);
    const std::vector<float> d = round_trip(*c, {0, 3}, g);
    for (std::size_t i = 0; i < g.size(); ++i) {
      const float e = std::fabs(d[i] - g[i]);
      if (spec == "fp16") {  // half precision: 11 significant bits (these are normal halves)
        ASSERT_LE(e, std::fabs(g[i]) * (1.0f / 2048) + 6e-8f) << i;
      } else if (spec == "qsgd:64") {
        ASSERT_LE(e, n2 / 64 * 1.0001) << i;
      } else if (spec == "qsgd:4") {
        ASSERT_LE(e, n2 / 4 * 1.0001) << i;
      } else if (spec == "terngrad") {
        ASSERT_LE(e, amax * 1.0001f) << i;
      } else if (spec == "signsgd,noef") {
        ASSERT_FLOAT_EQ(std::fabs(d[i]), scale) << i;
        ASSERT_EQ(std::signbit(d[i]), std::signbit(g[i])) << i;
      } else if (spec == "onebit,noef") {
        ASSERT_EQ(d[i] >= 0, g[i] >= 0) << i;
      } else {  // top-k, random-k: a value as it was, or zero
        ASSERT_TRUE(d[i] == 0 || d[i] == g[i]) << i;
      }
    }
  }
  // Top-k keeps exactly the k largest magnitudes.
  auto topk = make_compressor("topk:0.1,noef");
  const std::vector<float> d = round_trip(*topk, {}, g);
  std::vector<float> mags;
  for (float x : g) mags.push_back(std::fabs(x));
  std::sort(mags.rbegin(), mags.rend());
  int kept = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (d[i] != 0) {
      ++kept;
      EXPECT_GE(std::fabs(g[i]), mags[499]);
    }
  EXPECT_EQ(kept, 500);
  // One-bit keeps each sign's sum.
  auto onebit = make_compressor("onebit,noef");
  const std::vector<float> o = round_trip(*onebit, {}, g);
  double pos = 0, opos = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (g[i] >= 0) {
      pos += g[i];
      opos += o[i];
    }
  EXPECT_NEAR(opos, pos, 1e-4 * std::fabs(pos));
}

// QSGD and TernGrad are unbiased: the mean over many draws tends to the gradient.
TEST(Compression, StochasticMethodsAreUnbiased) {
  const std::vector<float> g = gradient(64, 3);
  for (const std::string spec : {"qsgd:4", "terngrad"}) {
    auto c = make_compressor(spec, 11);
    EXPECT_TRUE(c->unbiased());
    const int draws = 20000;
    std::vector<double> mean(g.size(), 0.0);
    for (int t = 0; t < draws; ++t) {
      const std::vector<float> d = round_trip(*c, {0, t}, g);
      for (std::size_t i = 0; i < g.size(); ++i) mean[i] += d[i] / draws;
    }
    float amax = 0;
    for (float x : g) amax = std::max(amax, std::fabs(x));
    for (std::size_t i = 0; i < g.size(); ++i)  // each draw within amax or ||g||: 5 sigma
      EXPECT_NEAR(mean[i], g[i], 5 * (spec == "terngrad" ? amax : norm2(g) / 4) / std::sqrt(draws))
          << spec << " value " << i;
  }
  EXPECT_FALSE(make_compressor("topk")->unbiased());
}

// Error feedback: after any number of steps, what was sent plus the residual equals the sum
// of the gradients; and its state goes into a checkpoint and back.
TEST(Compression, ErrorFeedbackSendsEverythingEventually) {
  for (const std::string spec : {"topk:0.05", "randomk:0.05", "efsignsgd", "onebit", "qsgd:2,ef"}) {
    auto c = make_compressor(spec, 5);
    const std::int64_t n = 300;
    std::vector<double> given(n, 0.0), sent(n, 0.0);
    float largest = 0;  // of what was sent: each step rounds within half its float spacing
    for (int t = 0; t < 50; ++t) {
      const std::vector<float> g = gradient(n, 100 + t);
      for (std::int64_t i = 0; i < n; ++i) given[i] += g[i];
      const std::vector<float> d = round_trip(*c, {4, t}, g);
      for (std::int64_t i = 0; i < n; ++i) {
        sent[i] += d[i];
        largest = std::max(largest, std::fabs(d[i]));
      }
    }
    const double tolerance = 50 * 2 * largest * std::ldexp(1.0, -23);
    // The residual: what encoding zeros now would send back out of it.
    const std::string state = c->state();
    ASSERT_EQ(state.size(), 16 + n * 4) << spec;
    std::vector<float> residual(n);
    std::memcpy(residual.data(), state.data() + 16, n * 4);
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(sent[i] + residual[i], given[i], tolerance) << spec << " value " << i;
    auto again = make_compressor(spec, 5);
    again->set_state(state);
    EXPECT_EQ(again->state(), state);
    const std::vector<float> g = gradient(n, 999);
    EXPECT_EQ(encode(*again, {4, 50}, g), encode(*c, {4, 50}, g)) << spec;
    EXPECT_THROW(again->set_state(state.substr(0, 20)), InvalidInput) << spec;
  }
  EXPECT_THROW(make_compressor("fp16")->set_state("x"), InvalidInput);
}

// DGC's density warms up over four stages (0.25, 0.0625, 0.015625, 0.0039; never below
// the final one), then stays at the final one; PS and worker agree from the iteration.
TEST(Dgc, DensityWarmsUpInStagesOfIterations) {
  auto c = make_compressor("dgc:0.001:10");
  const std::int64_t n = 100000;
  EXPECT_EQ(c->encoded_bytes(n, 0), 25000u * 8);
  EXPECT_EQ(c->encoded_bytes(n, 9), 25000u * 8);
  EXPECT_EQ(c->encoded_bytes(n, 10), 6250u * 8);
  EXPECT_EQ(c->encoded_bytes(n, 25), 1563u * 8);  // 1562.5, rounded
  EXPECT_EQ(c->encoded_bytes(n, 39), 391u * 8);   // 390.625
  EXPECT_EQ(c->encoded_bytes(n, 40), 100u * 8);
  EXPECT_EQ(c->encoded_bytes(n, 100000), 100u * 8);
  EXPECT_EQ(make_compressor("dgc:0.01:10")->encoded_bytes(n, 35), 1000u * 8);  // floor: 0.01
  EXPECT_EQ(make_compressor("dgc:0.001:0")->encoded_bytes(n, 0), 100u * 8);
  const std::vector<float> g = gradient(1000, 3);
  std::vector<std::uint8_t> bytes = encode(*c, {1, 0}, g);
  std::vector<float> scratch;
  EXPECT_THROW(c->decode({1, 10}, bytes.data(), bytes.size(), 1000, scratch), InvalidInput);
}

// Without momentum DGC is top-k with error feedback, byte for byte; with momentum it is
// the paper's update, checked against a plain re-statement: u = m u + g, v = v + u, send the
// k largest |v|, zero v and u where sent (momentum factor masking).
TEST(Dgc, IsMomentumCorrectedTopKWithMasking) {
  const std::int64_t n = 200;
  {
    auto dgc = make_compressor("dgc:0.05:0", 1, /*momentum=*/0);
    auto topk = make_compressor("topk:0.05,ef");
    for (int t = 0; t < 20; ++t) {
      const std::vector<float> g = gradient(n, 50 + t);
      ASSERT_EQ(encode(*dgc, {2, t}, g), encode(*topk, {2, t}, g)) << t;
    }
  }
  const float m = 0.9f;
  auto dgc = make_compressor("dgc:0.05:0", 1, m);
  std::vector<float> u(n, 0), v(n, 0);
  for (int t = 0; t < 30; ++t) {
    const std::vector<float> g = gradient(n, 80 + t);
    for (std::int64_t i = 0; i < n; ++i) {
      u[i] = m * u[i] + g[i];
      v[i] += u[i];
    }
    std::vector<std::int64_t> order(n);
    for (std::int64_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return std::fabs(v[a]) > std::fabs(v[b]);
    });
    std::vector<float> expected(n, 0);
    for (int j = 0; j < 10; ++j) {
      expected[order[j]] = v[order[j]];
      v[order[j]] = u[order[j]] = 0;
    }
    ASSERT_EQ(round_trip(*dgc, {3, t}, g), expected) << t;
  }
  // Its state is u and v of each atom; a checkpoint's copy encodes the same next.
  const std::string state = dgc->state();
  ASSERT_EQ(state.size(), 16 + 2 * n * 4);
  std::vector<float> saved_v(n);
  std::memcpy(saved_v.data(), state.data() + 16 + n * 4, n * 4);
  EXPECT_EQ(saved_v, v);
  auto again = make_compressor("dgc:0.05:0", 1, m);
  again->set_state(state);
  const std::vector<float> g = gradient(n, 999);
  EXPECT_EQ(encode(*again, {3, 30}, g), encode(*dgc, {3, 30}, g));
  EXPECT_THROW(again->set_state(state.substr(0, 100)), InvalidInput);
}

// The same seed, atom and iteration give the same bytes (a PS draws random-k's indices
// itself); random-k's encodings of one slot sum to the encoding of the sum.
TEST(Compression, DrawsDependOnSeedAtomAndIterationOnly) {
  const std::vector<float> a = gradient(1000, 4), b = gradient(1000, 5);
  for (const std::string spec : {"qsgd:8", "terngrad", "randomk:0.02,noef"}) {
    EXPECT_EQ(encode(*make_compressor(spec, 3), {1, 2}, a),
              encode(*make_compressor(spec, 3), {1, 2}, a));
    EXPECT_NE(encode(*make_compressor(spec, 3), {1, 2}, a),
              encode(*make_compressor(spec, 3), {1, 3}, a));
    EXPECT_NE(encode(*make_compressor(spec, 3), {1, 2}, a),
              encode(*make_compressor(spec, 3), {2, 2}, a));
    EXPECT_NE(encode(*make_compressor(spec, 3), {1, 2}, a),
              encode(*make_compressor(spec, 4), {1, 2}, a));
  }
  auto r = make_compressor("randomk:0.02,noef", 3);
  EXPECT_TRUE(r->linear());
  std::vector<float> sum(1000);
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = a[i] + b[i];
  const std::vector<float> da = round_trip(*r, {1, 2}, a), db = round_trip(*r, {1, 2}, b),
                           ds = round_trip(*r, {1, 2}, sum);
  int nonzero = 0;
  for (std::size_t i = 0; i < sum.size(); ++i) {
    EXPECT_EQ(ds[i], da[i] + db[i]) << i;
    nonzero += ds[i] != 0;
  }
  EXPECT_EQ(nonzero, 20);
}

// A PS decodes untrusted bytes: every wrong size, and every field a sender could get
// wrong, is refused naming it; random bytes of the right size never crash a decoder.
TEST(Compression, RefusesMalformedPayloads) {
  const std::vector<float> g = gradient(100, 6);
  std::vector<float> scratch;
  for (const MethodInfo& m : methods()) {
    auto c = make_compressor(m.name);
    std::vector<std::uint8_t> bytes = encode(*c, {}, g);
    for (std::size_t cut : {std::size_t{1}, bytes.size()})
      EXPECT_THROW(c->decode({}, bytes.data(), bytes.size() - cut, 100, scratch), InvalidInput)
          << m.name;
    bytes.push_back(0);
    EXPECT_THROW(c->decode({}, bytes.data(), bytes.size(), 100, scratch), InvalidInput) << m.name;
    EXPECT_THROW(c->decode({}, bytes.data(), bytes.size(), -1, scratch), InvalidInput) << m.name;
    std::mt19937 rng(1);
    for (int t = 0; t < 2000; ++t) {
      for (auto& x : bytes) x = static_cast<std::uint8_t>(rng());
      try {
        c->decode({}, bytes.data(), bytes.size() - 1, 100, scratch);
      } catch (const InvalidInput&) {
      }
    }
  }
  auto refusal = [&](const std::string& spec, const std::function<void(std::uint8_t*)>& spoil) {
    auto c = make_compressor(spec);
    std::vector<std::uint8_t> bytes = encode(*c, {}, g);
    spoil(bytes.data());
    try {
      c->decode({}, bytes.data(), bytes.size(), 100, scratch);
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const float nan = std::nanf("");
  EXPECT_EQ(refusal("qsgd:4", [&](std::uint8_t* b) { std::memcpy(b, &nan, 4); }),
            "qsgd:4 payload: norm nan is not a norm");
  EXPECT_EQ(refusal("qsgd:4", [](std::uint8_t* b) { b[4] = 0xff; }),
            "qsgd:4 payload: value 0 has level 7 of 4");
  EXPECT_EQ(refusal("terngrad", [](std::uint8_t* b) { b[4] = 0x03; }),
            "terngrad payload: value 0 is not -1, 0 or 1");
  EXPECT_EQ(refusal("topk:0.05", [](std::uint8_t* b) { std::memset(b + 4, 0, 4); }),
            "topk:0.05 payload: index 0 at 1 is not increasing within 0..99");
  EXPECT_EQ(refusal("topk:0.05", [](std::uint8_t* b) { b[16] = 100; }),
            "topk:0.05 payload: index 100 at 4 is not increasing within 0..99");
  EXPECT_EQ(refusal("onebit", [&](std::uint8_t* b) { std::memcpy(b + 4, &nan, 4); }),
            "onebit payload: its means are not finite");
}

// fp16 by hand equals IEEE half: every half goes to a float and back unchanged, and a
// float goes to the nearest half (ties to even).
TEST(Fp16, IsIeeeHalfPrecisionRoundedToNearestEven) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const bool is_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
    if (is_nan) continue;
    ASSERT_EQ(float_to_half(half_to_float(static_cast<std::uint16_t>(h))), h) << h;
  }
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // the first value that rounds to infinity
  EXPECT_EQ(float_to_half(65519.99f), 0x7bff);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);         // the smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);         // a tie: to even, zero
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // a tie: to even
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> exponent(-26, 17);
  for (int t = 0; t < 200000; ++t) {  // nearest of the two neighbouring halves
    const float f = std::ldexp(std::uniform_real_distribution<float>(1, 2)(rng), exponent(rng));
    const std::uint16_t h = float_to_half(f);
    if (h == 0x7c00) {
      ASSERT_GE(f, 65520.0f);
      continue;
    }
    const float e = std::fabs(half_to_float(h) - f);
    for (int d : {-1, 1}) {
      const auto other = static_cast<std::uint16_t>(h + d);
      if (other >= 0x7c00) continue;
      ASSERT_LE(e, std::fabs(half_to_float(other) - f)) << f;
    }
  }
}

}  // namespace
}  // namespace dynacomm::compress

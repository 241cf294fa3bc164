#include "ps/pull_encoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "base/error.h"

namespace dynacomm::ps {
namespace {

using compress::PullCodec;

std::vector<float> random_values(std::mt19937& rng, std::size_t n, float scale) {
  std::normal_distribution<float> d(0, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// A worker's side: its copy of each atom, changed only by the replies it is sent.
struct Copy {
  std::vector<std::vector<float>> atoms;
  void take(const PullCodec& codec, PullEncoder& e, int rank, int atom, std::int64_t v,
            PullCodec::Kind* kind) {
    std::vector<std::uint8_t> reply(e.reply_bytes(rank, atom, v));
    e.write(rank, atom, v, reply.data());
    std::vector<float>& mine = atoms[static_cast<std::size_t>(atom)];
    ASSERT_EQ(codec.apply({atom, v}, reply.data(), reply.size(),
                          static_cast<std::int64_t>(mine.size()), mine.data(), kind),
              reply.size());
  }
};

// Every worker's copy equals the PS's public copy bit for bit after every version, whatever
// the method; the first reply is a copy, every later one an update of the method's size, and
// the public copy tracks the parameters (what an update leaves out goes with the next).
TEST(PullEncoder, WorkerCopiesEqualThePublicCopyBitForBit) {
  for (const char* method : {"topk:0.05", "fp16", "qsgd:16", "randomk:0.1", "signsgd"}) {
    SCOPED_TRACE(method);
    std::mt19937 rng(3);
    std::vector<std::vector<float>> params{random_values(rng, 300, 1), random_values(rng, 7, 1)};
    PullEncoder e(PullCodec(method, 5), 2, params, 0);
    const PullCodec codec(method, 5);
    std::vector<Copy> workers(2, Copy{{std::vector<float>(300, 0), std::vector<float>(7, 0)}});
    for (std::int64_t v = 0; v < 30; ++v) {
      for (int a = 0; a < 2; ++a) {
        if (v > 0) {
          const auto step = random_values(rng, params[a].size(), 0.01f);
          for (std::size_t i = 0; i < step.size(); ++i) params[a][i] -= step[i];
          e.advance(a, v, params[a].data());
        }
        for (int r = 0; r < 2; ++r) {
          PullCodec::Kind kind{};
          workers[r].take(codec, e, r, a, v, &kind);
          EXPECT_EQ(kind, v == 0 ? PullCodec::kCopy : PullCodec::kDelta);
          ASSERT_EQ(std::memcmp(workers[r].atoms[a].data(), e.public_copy(a).data(),
                                params[a].size() * sizeof(float)),
                    0)
              << "rank " << r << " atom " << a << " version " << v;
        }
      }
    }
    EXPECT_EQ(e.copies_sent(), 4);
    EXPECT_EQ(e.deltas_sent(), 4 * 29);
    double off = 0, norm = 0;
    for (std::size_t i = 0; i < params[0].size(); ++i) {
      off += std::abs(params[0][i] - e.public_copy(0)[i]);
      norm += std::abs(params[0][i]);
    }
    EXPECT_LT(off, 0.2 * norm);  // error feedback: the copy does not drift away
  }
}

// A rank that missed a version, joined again or was sent the parameters gets a copy; the
// sizes say which it gets before it is written.
TEST(PullEncoder, ARankWithoutTheVersionBeforeGetsACopy) {
  const PullCodec codec("topk:0.1");
  std::vector<float> params(100, 1.0f);
  PullEncoder e(PullCodec("topk:0.1"), 3, {params}, 0);
  Copy w{{std::vector<float>(100, 0)}};
  PullCodec::Kind kind{};
  w.take(codec, e, 0, 0, 0, &kind);
  params[5] = 2;
  e.advance(0, 1, params.data());
  EXPECT_EQ(e.reply_bytes(0, 0, 1), codec.delta_bytes(100, 1));
  EXPECT_EQ(e.reply_bytes(1, 0, 1), codec.copy_bytes(100));  // never pulled
  w.take(codec, e, 0, 0, 1, &kind);
  EXPECT_EQ(kind, PullCodec::kDelta);
  EXPECT_EQ(w.atoms[0][5], 2.0f);
  params[6] = 3;
  e.advance(0, 2, params.data());
  params[7] = 4;
  e.advance(0, 3, params.data());
  EXPECT_EQ(e.reply_bytes(0, 0, 3), codec.copy_bytes(100));  // it holds 1, the update is from 2
  w.take(codec, e, 0, 0, 3, &kind);
  EXPECT_EQ(kind, PullCodec::kCopy);
  e.advance(0, 4, params.data());
  e.forget(0);
  EXPECT_EQ(e.reply_bytes(0, 0, 4), codec.copy_bytes(100));
  EXPECT_THROW(e.reply_bytes(0, 0, 3), InvalidInput);  // not the public copy's version
  EXPECT_THROW(e.reply_bytes(3, 0, 4), InvalidInput);  // no such rank
  EXPECT_THROW(e.reply_bytes(0, 1, 4), InvalidInput);  // no such atom
  e.advance(0, 2, params.data());                      // behind: nothing changes
  EXPECT_EQ(e.version(0), 4);
}

}  // namespace
}  // namespace dynacomm::ps

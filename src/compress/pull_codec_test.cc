#include "compress/pull_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "base/error.h"

namespace dynacomm::compress {
namespace {

TEST(PullCodec, TakesOneMethodWithoutErrorFeedback) {
  EXPECT_TRUE(PullCodec("none").dense());
  EXPECT_EQ(PullCodec("topk:0.01").name(), "topk:0.01");  // no ,ef: the PS keeps the rest
  EXPECT_EQ(PullCodec("topk:0.05,noef").name(), "topk:0.05");
  EXPECT_EQ(PullCodec("qsgd:16").name(), "qsgd:16");
  for (const char* bad : {"topk:0.01,ef", "auto", "auto:topk:0.01", "dgc", "zip", "topk:2", ""})
    EXPECT_THROW(PullCodec{bad}, InvalidInput) << bad;
}

TEST(PullCodec, SizesCountTheKindByte) {
  PullCodec c("fp16");
  EXPECT_EQ(c.copy_bytes(10), 41u);
  EXPECT_EQ(c.delta_bytes(10, 0), 21u);
  PullCodec dense("none");
  EXPECT_EQ(dense.copy_bytes(10), 40u);
  EXPECT_THROW(dense.delta_bytes(10, 0), InvalidInput);
  EXPECT_EQ(c.reply_table({10, 2}), (std::vector<std::vector<std::int64_t>>{{41, 9}, {21, 5}}));
  EXPECT_TRUE(dense.reply_table({10, 2}).empty());
}

// A copy overwrites, an update adds its decoding; what is malformed is refused and
// writes nothing.
TEST(PullCodec, AppliesCopiesAndUpdates) {
  PullCodec c("topk:0.5", 7);
  const std::vector<float> delta{0.5f, -4, 0.25f, 3};
  std::vector<std::uint8_t> update(c.delta_bytes(4, 3));
  c.encode_delta({1, 3}, delta.data(), 4, update.data());
  std::vector<float> copy{1, 1, 1, 1};
  PullCodec::Kind kind{};
  EXPECT_EQ(c.apply({1, 3}, update.data(), update.size(), 4, copy.data(), &kind), update.size());
  EXPECT_EQ(kind, PullCodec::kDelta);
  EXPECT_EQ(copy, (std::vector<float>{1, -3, 1, 4}));  // the two largest, added

  std::vector<std::uint8_t> whole(c.copy_bytes(4));
  whole[0] = PullCodec::kCopy;
  const std::vector<float> values{9, 8, 7, 6};
  std::memcpy(whole.data() + 1, values.data(), 16);
  EXPECT_EQ(c.apply({1, 3}, whole.data(), whole.size(), 4, copy.data(), &kind), whole.size());
  EXPECT_EQ(kind, PullCodec::kCopy);
  EXPECT_EQ(copy, values);

  const std::vector<float> before = copy;
  EXPECT_THROW(c.apply({1, 3}, whole.data(), whole.size() - 1, 4, copy.data(), &kind),
               InvalidInput);
  EXPECT_THROW(c.apply({1, 3}, update.data(), update.size() - 1, 4, copy.data(), &kind),
               InvalidInput);
  EXPECT_THROW(c.apply({1, 3}, update.data(), 0, 4, copy.data(), &kind), InvalidInput);
  update[0] = 2;
  EXPECT_THROW(c.apply({1, 3}, update.data(), update.size(), 4, copy.data(), &kind),
               InvalidInput);
  update[0] = PullCodec::kDelta;
  update[1] = 9;  // index 9 of 4 values
  EXPECT_THROW(c.apply({1, 3}, update.data(), update.size(), 4, copy.data(), &kind),
               InvalidInput);
  EXPECT_EQ(copy, before);
}

}  // namespace
}  // namespace dynacomm::compress

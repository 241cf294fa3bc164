#include "ps/membership.h"

#include <gtest/gtest.h>

namespace dynacomm::ps {
namespace {

TEST(Membership, EachRankJoinsOnceFromOnePeerAndLeavesOnce) {
  Membership m(3);
  EXPECT_EQ(m.missing(), "0, 1, 2");
  EXPECT_EQ(m.join(0, "a"), "");
  EXPECT_EQ(m.join(0, "a"), "") << "the same peer again";
  EXPECT_EQ(m.join(0, "b"), "refused: rank 0 has already joined");
  EXPECT_NE(m.join(3, "c").find("the job has 3 workers (ranks 0..2)"), std::string::npos);
  EXPECT_NE(m.join(-1, "c").find("refused: rank -1"), std::string::npos);
  EXPECT_EQ(m.join(2, "c"), "");
  EXPECT_EQ(m.missing(), "1");
  EXPECT_EQ(m.rank_of("c"), 2);
  EXPECT_FALSE(m.rank_of("b"));
  EXPECT_TRUE(m.is(0, "a"));
  EXPECT_FALSE(m.is(0, "c"));
  EXPECT_EQ(m.who("c"), "rank 2");
  EXPECT_EQ(m.who("zz"), "an unknown peer");
  // Goodbyes count ranks, not messages.
  m.leave(0);
  m.leave(0);
  m.leave(2);
  m.leave(1);  // never joined: not counted
  EXPECT_FALSE(m.all_left());
  EXPECT_EQ(m.join(1, "d"), "");
  m.leave(1);
  EXPECT_TRUE(m.all_left());
}

}  // namespace
}  // namespace dynacomm::ps

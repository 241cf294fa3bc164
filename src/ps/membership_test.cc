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
  EXPECT_FALSE(m.finished());
  EXPECT_EQ(m.join(1, "d"), "");
  EXPECT_EQ(m.join(0, "e"), "refused: rank 0 has finished the job");
  m.leave(1);
  EXPECT_TRUE(m.finished());
}

TEST(Membership, ASilentRankIsNamedAndMayJoinAgainOnceDropped) {
  using namespace std::chrono_literals;
  const Membership::Clock::time_point t0{};
  Membership m(3);
  m.join(0, "a", t0);
  m.join(1, "b", t0);
  m.join(2, "c", t0);
  m.seen(0, t0 + 20s);
  m.seen(2, t0 + 25s);
  EXPECT_EQ(m.silent(t0 + 30s, 10s), (std::vector<int>{1}));
  EXPECT_EQ(m.silent(t0 + 40s, 10s), (std::vector<int>{0, 1, 2}));
  m.drop(1);
  EXPECT_EQ(m.missing(), "1");
  EXPECT_FALSE(m.peer_of(1));
  EXPECT_EQ(m.silent(t0 + 30s, 10s), std::vector<int>{});
  EXPECT_EQ(m.join(1, "b2", t0 + 31s), "") << "rank 1 again, from a new peer";
  EXPECT_EQ(m.peer_of(1), "b2");
  m.leave(0);
  m.leave(2);
  EXPECT_FALSE(m.finished()) << "rank 1 has not finished";
  EXPECT_EQ(m.silent(t0 + 100s, 10s), std::vector<int>{1}) << "finished ranks are not silent";
  m.drop(1, t0 + 101s);  // it never comes back: those that finished end the job, once it
                         // has had the grace to come back
  EXPECT_FALSE(m.finished(t0 + 110s, 30s));
  EXPECT_TRUE(m.finished(t0 + 131s, 30s));
  EXPECT_TRUE(m.finished());
}

}  // namespace
}  // namespace dynacomm::ps

#include "worker/catch_up.h"

#include <gtest/gtest.h>

namespace dynacomm::worker {
namespace {

TEST(PushLabel, WithoutCatchUpTheIterationItself) {
  EXPECT_EQ(push_label(151, 153, false), 151);
  EXPECT_EQ(push_label(151, -1, false), 151);
}

TEST(PushLabel, NeverBelowTheIterationNorAboveTheOldestRead) {
  EXPECT_EQ(push_label(151, -1, true), 151);   // no reply yet
  EXPECT_EQ(push_label(151, 151, true), 151);  // on time
  EXPECT_EQ(push_label(151, 153, true), 153);  // every unit read at 153 or newer
}

// The replies of a round come in any order and the round's oldest version only falls as
// they do: the label falls with it. (The rule it replaced raised the label on the early
// replies and kept it when a later one read the iteration itself.)
TEST(PushLabel, FollowsTheOldestVersionDownAsLaterRepliesComeIn) {
  std::int64_t oldest = -1;
  for (const std::int64_t reply : {152, 153, 152, 151}) {
    oldest = oldest < 0 ? reply : std::min(oldest, reply);
    EXPECT_LE(push_label(151, oldest, true), oldest) << "after a reply at " << reply;
  }
  EXPECT_EQ(push_label(151, oldest, true), 151);
}

}  // namespace
}  // namespace dynacomm::worker

#include "worker/link_clock.h"

#include <gtest/gtest.h>

#include "worker/ms_time.h"

namespace dynacomm::worker {
namespace {

constexpr auto at = time_at_ms;

TEST(LinkClock, ATransferOnAnIdleLinkIsTimedFromItsReadiness) {
  LinkClock c;
  EXPECT_NEAR(c.busy_ms(at(100), at(150), 5), 45, 1e-6);    // 5 ms of it the latency
  EXPECT_NEAR(c.busy_ms(at(1000), at(1020), 5), 15, 1e-6);  // the link was idle before it
}

// Under ASP and backup workers the next iteration's first push may be ready while the
// previous iteration's last one is still on the uplink: it is timed from that one's end, not
// from its own readiness. (Before, only a push of the same iteration counted: a 5 KB push
// queued 5 s behind a 3 MB one on a 5 Mbit/s link read as 5 s, ~8 kbit/s.)
TEST(LinkClock, ATransferQueuedBehindTheLastOneIsTimedFromItsEnd) {
  LinkClock c;
  c.busy_ms(at(0), at(5005), 5);                          // iteration t's 3 MB push
  EXPECT_NEAR(c.busy_ms(at(200), at(5013), 5), 8, 1e-6);  // t + 1's 5 KB one, ready at 200
  EXPECT_NEAR(c.busy_ms(at(5020), at(5030), 5), 5, 1e-6);
}

TEST(LinkClock, NeverNegativeAndNeverBackwards) {
  LinkClock c;
  EXPECT_EQ(c.busy_ms(at(100), at(102), 5), 0);  // arrived sooner than the latency allows
  c.busy_ms(at(0), at(500), 0);
  c.busy_ms(at(0), at(300), 0);  // an answer out of order does not move the link's end back
  EXPECT_NEAR(c.busy_ms(at(400), at(520), 0), 20, 1e-6);
}

}  // namespace
}  // namespace dynacomm::worker

// The link emulation against a fake clock and a fake inner transport: when each frame
// reaches the other side is computed, not timed, so these checks hold on any machine.
// Real-time figures of the emulation belong to the bench.
#include "net/shaped_transport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <vector>

#include "base/error.h"

namespace dynacomm::net {
namespace {

using namespace std::chrono_literals;

// Records what it is handed (with the fake time), returns what the test queued.
class FakeTransport : public Transport {
 public:
  explicit FakeTransport(const base::FakeTime& time) : time_(time) {}
  using Transport::send;
  void send(std::string&& frame) override {
    ASSERT_GE(frame.size(), kHeaderBytes);
    sent.push_back({frame_type(frame), time_.now()});
  }
  bool poll(Clock::time_point, Message* out) override {
    if (inbound.empty()) return false;
    *out = std::move(inbound.front());
    inbound.pop_front();
    out->received = out->delivered = time_.now();
    return true;
  }
  void wake() override { ++wakes; }
  void set_limits(WireLimits) override {}
  const std::string& endpoint() const override { return endpoint_; }
  std::uint64_t bytes_sent() const override { return 0; }
  std::uint64_t bytes_received() const override { return 0; }
  std::uint64_t dropped() const override { return 0; }
  const std::string& last_drop() const override { return endpoint_; }

  void deliver(MessageType type, std::int64_t payload_bytes) {
    Message m;
    m.header.type = type;
    m.header.payload_bytes = static_cast<std::uint64_t>(payload_bytes);
    inbound.push_back(std::move(m));
  }

  struct Sent {
    MessageType type;
    Clock::time_point at;
  };
  std::vector<Sent> sent;
  std::deque<Message> inbound;
  int wakes = 0;

 private:
  const base::FakeTime& time_;
  std::string endpoint_ = "fake";
};

std::string frame(MessageType type, std::int64_t bytes) {
  std::vector<char> payload(static_cast<std::size_t>(bytes));
  return encode(Header{type, 0, 0, 0, 0}, payload.data(), payload.size());
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Link : ::testing::Test {
  base::FakeTime time;
  FakeTransport inner{time};
  Clock::time_point t0 = time.now();
};

TEST_F(Link, TenMegabytesUpAtTwentyMbitTakeFourSeconds) {
  ShapedTransport link(inner, LinkEmulation{0, 20e6, 0, 0}, time);
  const auto at = link.send_timed(frame(MessageType::kPush, 10'000'000));
  EXPECT_DOUBLE_EQ(ms(at - t0), 4000);
  Message m;
  time.advance(3999ms);
  EXPECT_FALSE(link.poll(time.now(), &m));
  EXPECT_TRUE(inner.sent.empty()) << "left before the uplink carried it";
  EXPECT_FALSE(link.idle());
  time.advance(1ms);
  EXPECT_FALSE(link.poll(time.now(), &m));
  ASSERT_EQ(inner.sent.size(), 1u);
  EXPECT_EQ(inner.sent[0].at, t0 + 4s);
  EXPECT_TRUE(link.idle());
}

TEST_F(Link, TenMegabytesDownAtTwentyMbitTakeFourSecondsAndTheLatency) {
  ShapedTransport link(inner, LinkEmulation{20e6, 0, 10, 0}, time);
  inner.deliver(MessageType::kPullReply, 10'000'000);
  Message m;
  EXPECT_FALSE(link.poll(time.now(), &m)) << "delivered before it crossed the downlink";
  time.advance(4009ms);
  EXPECT_FALSE(link.poll(time.now(), &m));
  time.advance(1ms);
  ASSERT_TRUE(link.poll(time.now(), &m));
  EXPECT_EQ(m.delivered, t0 + 4010ms);
  EXPECT_EQ(m.received, t0) << "taken off the socket at once";
}

TEST_F(Link, PushesQueueBehindEachOtherAndPullRequestsTakeTheLatencyOnly) {
  ShapedTransport link(inner, LinkEmulation{0, 8e6, 5, 0}, time);  // 1 MB/s
  EXPECT_DOUBLE_EQ(ms(link.send_timed(frame(MessageType::kPush, 1'000'000)) - t0), 1005);
  EXPECT_DOUBLE_EQ(ms(link.send_timed(frame(MessageType::kPush, 1'000'000)) - t0), 2005);
  EXPECT_DOUBLE_EQ(ms(link.send_timed(frame(MessageType::kPullRequest, 0)) - t0), 5)
      << "a request does not wait behind the pushes";
  link.send_timed(frame(MessageType::kShutdown, 0));  // control: handed over at once
  ASSERT_EQ(inner.sent.size(), 1u);
  EXPECT_EQ(inner.sent[0].type, MessageType::kShutdown);
  Message m;
  time.advance(3s);
  EXPECT_FALSE(link.poll(time.now(), &m));
  ASSERT_EQ(inner.sent.size(), 4u);
  EXPECT_EQ(inner.sent[1].type, MessageType::kPullRequest);
  EXPECT_EQ(inner.sent[2].type, MessageType::kPush);
}

TEST_F(Link, AnAckWaitsBehindTheRepliesOnTheDownlink) {
  ShapedTransport link(inner, LinkEmulation{8e6, 0, 50, 0}, time);
  inner.deliver(MessageType::kPullReply, 1'000'000);  // 1 s at 1 MB/s
  inner.deliver(MessageType::kPushAck, 24);
  inner.deliver(MessageType::kPlans, 10);  // control: at once
  Message m;
  ASSERT_TRUE(link.poll(time.now(), &m));
  EXPECT_EQ(m.header.type, MessageType::kPlans);
  time.advance(1050ms);
  ASSERT_TRUE(link.poll(time.now(), &m));
  EXPECT_EQ(m.header.type, MessageType::kPullReply);
  ASSERT_TRUE(link.poll(time.now(), &m));
  EXPECT_EQ(m.header.type, MessageType::kPushAck);
  EXPECT_EQ(m.delivered, t0 + 1050ms) << "behind the reply, then one latency";
}

TEST_F(Link, ARateChangeTakesEffectForLaterFramesAndPerMessageOverheadCounts) {
  ShapedTransport link(inner, LinkEmulation{0, 8e6, 0, 2}, time);
  // 1 MB plus 2 ms of overhead at 1 MB/s.
  EXPECT_DOUBLE_EQ(ms(link.send_timed(frame(MessageType::kPush, 1'000'000)) - t0), 1002);
  link.set_link(LinkEmulation{0, 80e6, 0, 2});  // 10 MB/s from now
  EXPECT_DOUBLE_EQ(ms(link.send_timed(frame(MessageType::kPush, 1'000'000)) - t0), 1104);
}

TEST_F(Link, UnpacedDirectionsKeepOnlyTheLatency) {
  ShapedTransport link(inner, LinkEmulation{0, 0, 20, 0}, time);  // a kernel-shaped link
  EXPECT_NEAR(ms(link.send_timed(frame(MessageType::kPush, 10'000'000)) - t0), 20, 1e-3);
  link.wake();
  EXPECT_EQ(inner.wakes, 1);
}

// The PS's cloud link under the user-space emulation: two workers' transports, each with
// its own 100 Mbit/s edge, share one 100 Mbit/s link into the PS through a mapped file (a
// second mapping stands for the second process). Their pushes queue in it one after the
// other; a 20 Mbit/s edge is slower than the cloud link and sets its own pace.
TEST_F(Link, WorkersPushesQueueInTheSharedCloudLink) {
  const std::string path = ::testing::TempDir() + "cloud-link-test";
  auto launcher = SharedCloudLink::create(path, 100e6, 50e6);
  auto a = SharedCloudLink::open(path), b = SharedCloudLink::open(path);
  FakeTransport inner_b{time};
  ShapedTransport link_a(inner, LinkEmulation{100e6, 100e6, 5, 0}, time);
  ShapedTransport link_b(inner_b, LinkEmulation{100e6, 20e6, 5, 0}, time);
  link_a.set_cloud(a.get());
  link_b.set_cloud(b.get());
  // 1 MB: 80 ms at 100 Mbit/s. a's push has the cloud link first; b's waits behind it,
  // though b's own 20 Mbit/s edge (400 ms) is the slower of its two.
  EXPECT_DOUBLE_EQ(ms(link_a.send_timed(frame(MessageType::kPush, 1'000'000)) - t0), 85);
  EXPECT_DOUBLE_EQ(ms(link_b.send_timed(frame(MessageType::kPush, 1'000'000)) - t0), 405);
  EXPECT_DOUBLE_EQ(ms(link_a.send_timed(frame(MessageType::kPush, 1'000'000)) - t0), 245)
      << "behind b's frame in the cloud link (160 ms), then its own";
  // Pull replies share the link out of the PS (50 Mbit/s: 160 ms per MB).
  inner.deliver(MessageType::kPullReply, 1'000'000);
  inner_b.deliver(MessageType::kPullReply, 1'000'000);
  Message m;
  EXPECT_FALSE(link_a.poll(time.now(), &m));
  EXPECT_FALSE(link_b.poll(time.now(), &m));
  time.advance(325ms);
  ASSERT_TRUE(link_b.poll(time.now(), &m)) << "b's reply: 320 ms in the cloud link, then 5";
  EXPECT_EQ(m.delivered, t0 + 325ms);
  EXPECT_EQ(launcher->in_bps(), 100e6);
  EXPECT_THROW(SharedCloudLink::open(path + "-missing"), Error);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dynacomm::net

#include "worker/push_queue.h"

#include <gtest/gtest.h>

#include "net/shaped_transport.h"

namespace dynacomm::worker {
namespace {

PushQueue::Push push(std::int64_t t, int segment, std::uint32_t atom, std::int64_t bytes,
                     std::int64_t credit) {
  return {t, segment, atom, bytes, credit, "frame " + std::to_string(segment)};
}

TEST(PushQueue, PlanOrderSendsAsQueuedWithoutCredit) {
  PushQueue q;
  q.add(push(0, 1, 10, 1000, 0));
  q.add(push(0, 0, 0, 1000, 0));
  EXPECT_EQ(q.next()->segment, 1);
  EXPECT_EQ(q.next()->segment, 0);
  EXPECT_EQ(q.unacked_bytes(), 2000);
  EXPECT_FALSE(q.next());
}

TEST(PushQueue, PriorityTakesTheOldestIterationsLowestSegmentWithinTheCredit) {
  PushQueue q;
  q.add(push(1, 0, 0, 400, 1000));  // the next iteration's first: after the older ones
  q.add(push(0, 2, 20, 400, 1000));
  q.add(push(0, 1, 10, 400, 1000));
  EXPECT_EQ(q.next()->segment, 1);
  EXPECT_EQ(q.next()->segment, 2);
  EXPECT_FALSE(q.next()) << "800 + 400 bytes exceed the credit";
  q.acked(400);
  auto p = q.next();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->iteration, 1);
  EXPECT_EQ(p->frame, "frame 0");
  EXPECT_TRUE(q.empty());
}

TEST(PushQueue, APushLargerThanTheCreditGoesAloneOnceAllIsAcknowledged) {
  PushQueue q;
  q.add(push(0, 0, 0, 100, 1000));
  q.add(push(0, 1, 5, 5000, 1000));
  ASSERT_TRUE(q.next());
  EXPECT_FALSE(q.next());
  q.acked(100);
  EXPECT_EQ(q.next()->bytes, 5000);
  EXPECT_EQ(q.unacked_bytes(), 5000);
}

// A fake PS behind the emulated link: it acknowledges each push the moment the link hands
// it over, and the ack crosses the emulated downlink back.
class AckingPs : public net::Transport {
 public:
  explicit AckingPs(const base::FakeTime& time) : time_(time) {}
  using Transport::send;
  void send(std::string&&) override {
    net::Message ack;
    ack.header.type = net::MessageType::kPushAck;
    acks_.push_back(std::move(ack));
    arrived.push_back(time_.now());
  }
  bool poll(net::Clock::time_point, net::Message* out) override {
    if (acks_.empty()) return false;
    *out = std::move(acks_.front());
    acks_.pop_front();
    out->received = out->delivered = time_.now();
    return true;
  }
  void wake() override {}
  void set_limits(net::WireLimits) override {}
  const std::string& endpoint() const override { return name_; }
  std::uint64_t bytes_sent() const override { return 0; }
  std::uint64_t bytes_received() const override { return 0; }
  std::uint64_t dropped() const override { return 0; }
  const std::string& last_drop() const override { return name_; }
  std::vector<net::Clock::time_point> arrived;

 private:
  const base::FakeTime& time_;
  std::deque<net::Message> acks_;
  std::string name_ = "fake ps";
};

// P3's credit comes back with the ack, which crosses the downlink and its latency: cnn's
// 3.2 MB of gradients in five 640 kB segments through a 640 kB credit wait a round trip
// (2 x 50 ms) for each ack, so the last push reaches the PS at least 4 round trips after
// the first. Fails if an ack came back without the latency.
TEST(PushQueue, PriorityCreditWaitsARoundTripForEachAck) {
  base::FakeTime time;
  AckingPs ps(time);
  net::ShapedTransport link(ps, net::LinkEmulation{1e9, 1e9, 50, 0}, time);
  PushQueue q;
  for (int s = 0; s < 5; ++s) q.add(push(0, s, static_cast<std::uint32_t>(s), 640'000, 640'000));
  for (int step = 0; step < 10'000 && ps.arrived.size() < 5; ++step) {
    while (auto p = q.next()) {
      std::string f = net::make_frame(static_cast<std::size_t>(p->bytes));
      net::seal_frame(f, net::Header{net::MessageType::kPush, 0, 0, 0, 0});
      link.send_timed(std::move(f));
    }
    net::Message m;
    while (link.poll(time.now(), &m))
      if (m.header.type == net::MessageType::kPushAck) q.acked(640'000);
    time.advance(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(ps.arrived.size(), 5u);
  const double span_ms =
      std::chrono::duration<double, std::milli>(ps.arrived.back() - ps.arrived.front()).count();
  EXPECT_GE(span_ms, 4 * 100.0);
  EXPECT_LT(span_ms, 4 * 100.0 + 4 * 10.0) << "each wait is one round trip plus the transfer";
}

}  // namespace
}  // namespace dynacomm::worker

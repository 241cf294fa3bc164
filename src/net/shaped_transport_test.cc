// The emulated link over the real transport: a 10 MB message through ZeroMQ on TCP
// loopback, paced by the user-space shaper exactly as the worker's communication thread
// does it (a push is released to the socket when the shaper says it has crossed the
// uplink; a pull reply is handed over when the shaper says it has crossed the downlink),
// must take 4 s at 20 Mbit/s, within 5%. This is a wall-clock check by the issue's
// request; it can only come out slower on a busy machine, never faster.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <zmq.hpp>

#include "net/connection.h"
#include "net/shaper.h"
#include "net/wire.h"

namespace dynacomm::net {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::int64_t kBytes = 10'000'000;
constexpr double kBps = 20e6;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Loopback {
  zmq::context_t ctx{1};
  zmq::socket_t router{ctx, zmq::socket_type::router};
  std::string endpoint;
  std::unique_ptr<Connection> worker;
  Loopback() {
    router.set(zmq::sockopt::linger, 0);
    router.bind("tcp://127.0.0.1:*");
    endpoint = router.get(zmq::sockopt::last_endpoint);
    worker = std::make_unique<Connection>(endpoint, WireLimits{{kBytes}, 0, 1024});
  }
  // The PS side: receives one frame from the worker, returns (routing id, frame).
  std::pair<std::string, std::string> receive() {
    zmq::message_t id, frame;
    EXPECT_TRUE(router.recv(id));
    EXPECT_TRUE(router.recv(frame));
    return {id.to_string(), frame.to_string()};
  }
};

TEST(ShapedTransport, TenMegabytesAtTwentyMbitTakeFourSecondsDown) {
  Loopback net;
  LinkShaper down(kBps, 0);
  std::vector<float> payload(kBytes / 4, 0.5f);
  const auto start = Clock::now();
  net.worker->send(Header{MessageType::kPullRequest, 0, 0, 0, 0}, nullptr, 0);
  auto [peer, request] = net.receive();
  const std::string reply =
      encode(Header{MessageType::kPullReply, -1, 0, 0, 0}, payload.data(), kBytes);
  net.router.send(zmq::buffer(peer), zmq::send_flags::sndmore);
  net.router.send(zmq::buffer(reply), zmq::send_flags::none);
  Message m = net.worker->receive(10s, "the 10 MB pull reply");
  std::this_thread::sleep_until(down.deliver_at(Clock::now(), kBytes));
  const double s = seconds_since(start);
  EXPECT_EQ(m.header.payload_bytes, static_cast<std::uint64_t>(kBytes));
  EXPECT_NEAR(s, 4.0, 0.2) << "10 MB down at 20 Mbit/s took " << s << " s";
  RecordProperty("seconds", std::to_string(s));
}

TEST(ShapedTransport, TenMegabytesAtTwentyMbitTakeFourSecondsUp) {
  Loopback net;
  LinkShaper up(kBps, 0);
  std::vector<float> payload(kBytes / 4, 0.5f);
  const auto start = Clock::now();
  std::this_thread::sleep_until(up.deliver_at(Clock::now(), kBytes));
  net.worker->send(Header{MessageType::kPush, 0, 0, 0, 0}, payload.data(), kBytes);
  auto [peer, frame] = net.receive();
  const double s = seconds_since(start);
  EXPECT_EQ(frame.size(), kHeaderBytes + kBytes);
  EXPECT_NEAR(s, 4.0, 0.2) << "10 MB up at 20 Mbit/s took " << s << " s";
}

}  // namespace
}  // namespace dynacomm::net

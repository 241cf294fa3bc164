// The ZeroMQ transports end to end, over inproc:// (one process) and TCP loopback: a
// worker's Connection and the PS's ZmqRouter exchange frames both ways, a departed peer is
// reported, a wake-up ends a poll at once, and a frame that is not a message is dropped.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <thread>

#include "base/error.h"
#include "net/connection.h"
#include "net/zmq_router.h"

namespace dynacomm::net {
namespace {

using namespace std::chrono_literals;

const WireLimits kLimits{{16}, 3, 1024};

// A PS side that answers the first message by echoing a pull reply of unit 0.
Inbound receive(ZmqRouter& router) {
  Inbound in;
  const auto deadline = Clock::now() + 10s;
  while (!router.poll(deadline, &in)) EXPECT_LT(Clock::now(), deadline) << "nothing came";
  return in;
}

class Transports : public ::testing::TestWithParam<std::string> {};

TEST_P(Transports, FramesGoBothWays) {
  ZmqRouter router(GetParam());
  Connection worker(router.endpoint(), kLimits);
  worker.send(Header{MessageType::kPullRequest, 2, 7, 0, 0}, nullptr, 0);
  Inbound in = receive(router);
  ASSERT_TRUE(in.ok());
  DecodeResult r = decode(in.data(), in.size(), kLimits);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.header.sender, 2);
  EXPECT_EQ(r.header.iteration, 7);
  const float params[4] = {1, 2, 3, 4};
  ASSERT_TRUE(router.send(
      in.peer, encode(Header{MessageType::kPullReply, -1, 7, 0, 0}, params, sizeof params)));
  Message m = worker.receive(10s, "the reply");
  EXPECT_EQ(m.header.type, MessageType::kPullReply);
  EXPECT_EQ(reinterpret_cast<const float*>(m.payload())[3], 4.0f);
  EXPECT_LE(m.received, Clock::now());
  EXPECT_EQ(worker.bytes_sent(), kHeaderBytes);
  EXPECT_EQ(worker.bytes_received(), kHeaderBytes + sizeof params);
}

TEST_P(Transports, APeerThatLeftIsReportedNotThrown) {
  ZmqRouter router(GetParam());
  std::string peer;
  {
    Connection worker(router.endpoint(), kLimits);
    worker.send(Header{MessageType::kShutdown, 0, 0, 0, 0}, nullptr, 0);
    peer = receive(router).peer;
  }
  const auto deadline = Clock::now() + 10s;  // the disconnect reaches the router soon
  bool sent = true;
  while (sent && Clock::now() < deadline) {
    sent = router.send(peer, encode(Header{MessageType::kPushAck, -1, 0, 0, 0}, nullptr, 0));
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_FALSE(sent);
}

// A signal that lands on a polling thread (a launcher's stop picks any thread) is no
// event and no error: both sides' polls return without a message and do not throw.
TEST_P(Transports, ASignalOnThePollingThreadIsNotAnError) {
  struct sigaction sa {};
  sa.sa_handler = [](int) {};  // no SA_RESTART: poll returns EINTR
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGUSR1, &sa, &before), 0);
  ZmqRouter router(GetParam());
  Connection worker(router.endpoint(), kLimits);
  for (int side = 0; side < 2; ++side) {
    const pthread_t self = ::pthread_self();
    std::thread signaller([&] {
      std::this_thread::sleep_for(100ms);
      ::pthread_kill(self, SIGUSR1);
    });
    Message m;
    Inbound in;
    const auto start = Clock::now();
    EXPECT_NO_THROW(side == 0 ? worker.poll(start + 500ms, &m) : router.poll(start + 500ms, &in))
        << (side == 0 ? "the worker's" : "the PS's");
    signaller.join();
  }
  ::sigaction(SIGUSR1, &before, nullptr);
}

TEST_P(Transports, AWakeUpEndsThePollAtOnceAndGarbageIsDropped) {
  ZmqRouter router(GetParam());
  Connection worker(router.endpoint(), kLimits);
  worker.send(Header{MessageType::kShutdown, 0, 0, 0, 0}, nullptr, 0);
  const std::string peer = receive(router).peer;
  ASSERT_TRUE(router.send(peer, std::string("not a message")));
  std::thread waker([&] {
    std::this_thread::sleep_for(50ms);
    worker.wake();
  });
  Message m;
  const auto start = Clock::now();
  EXPECT_FALSE(worker.poll(start + 60s, &m));  // the garbage is dropped; the wake ends it
  waker.join();
  EXPECT_LT(Clock::now() - start, 30s);
  EXPECT_EQ(worker.dropped(), 1u);
  EXPECT_NE(worker.last_drop().find("short"), std::string::npos) << worker.last_drop();
  // An error from the peer is thrown, with its text.
  ASSERT_TRUE(router.send(peer, encode(Header{MessageType::kError, -1, 0, 0, 0}, "no", 2)));
  EXPECT_THROW(
      {
        try {
          worker.receive(10s, "the error");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("said: no"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

INSTANTIATE_TEST_SUITE_P(ZeroMq, Transports,
                         ::testing::Values("inproc://transport-test", "tcp://127.0.0.1:0"),
                         [](const auto& info) { return info.index == 0 ? "inproc" : "tcp"; });

}  // namespace
}  // namespace dynacomm::net

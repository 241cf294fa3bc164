// Kernel-shaped links (label netns): real namespaces, veth pairs and tbf qdiscs. They need
// root and skip, saying why, elsewhere; CI runs as root.
#include "cluster/netns.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "cluster/local_cluster.h"
#include "data/fashion_mnist.h"

namespace dynacomm::cluster {
namespace {

using Clock = std::chrono::steady_clock;

// What a shell command prints on stdout ("" when it cannot run).
std::string output_of(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  return out;
}

std::string namespaces() { return output_of("ip netns list 2>/dev/null"); }

// Namespaces of ours whose launcher has exited: what a run failed to clean up. (Other
// runs' namespaces, whose launchers live, are not leftovers.)
std::string leftovers() {
  std::string out;
  std::istringstream in(namespaces());
  for (std::string line; std::getline(in, line);) {
    const std::string name = line.substr(0, line.find(' '));
    const auto dash = name.find('-');
    if (name.rfind("dc", 0) != 0 || dash == std::string::npos || dash < 3) continue;
    const long pid = std::strtol(name.substr(2, dash - 2).c_str(), nullptr, 16);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) out += name + " ";
  }
  return out;
}

class Netns : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = NetnsTopology::unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

sockaddr_in ipv4(const std::string& address, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  return a;
}

// Sends `bytes` over TCP from namespace `from` to `to` (listening at `address`), each side
// a forked child; returns the receiver's seconds from connect to the last byte.
double timed_transfer(const std::string& from, const std::string& to, const std::string& address,
                      std::size_t bytes) {
  int ready[2], result[2];
  if (::pipe(ready) != 0 || ::pipe(result) != 0) throw Error("pipe failed");
  const pid_t receiver = ::fork();
  if (receiver == 0) {
    enter_namespace(to);
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = ipv4(address, 47011);
    const int one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(s, 1) != 0)
      ::_exit(2);
    char go = 1;
    if (::write(ready[1], &go, 1) != 1) ::_exit(3);
    const int c = ::accept(s, nullptr, nullptr);
    const auto start = Clock::now();
    std::vector<char> buf(1 << 16);
    std::size_t got = 0;
    for (ssize_t n; got < bytes && (n = ::read(c, buf.data(), buf.size())) > 0;)
      got += static_cast<std::size_t>(n);
    double seconds =
        got == bytes ? std::chrono::duration<double>(Clock::now() - start).count() : -1;
    if (::write(result[1], &seconds, sizeof seconds) != sizeof seconds) ::_exit(4);
    ::_exit(0);
  }
  char go;
  if (::read(ready[0], &go, 1) != 1) throw Error("the receiver did not start");
  const pid_t sender = ::fork();
  if (sender == 0) {
    enter_namespace(from);
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = ipv4(address, 47011);
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) ::_exit(2);
    std::vector<char> data(bytes, 'x');
    std::size_t sent = 0;
    for (ssize_t n; sent < bytes && (n = ::write(s, data.data() + sent, bytes - sent)) > 0;)
      sent += static_cast<std::size_t>(n);
    ::close(s);
    ::_exit(sent == bytes ? 0 : 3);
  }
  double seconds = -1;
  if (::read(result[0], &seconds, sizeof seconds) != sizeof seconds) seconds = -1;
  ::waitpid(sender, nullptr, 0);
  ::waitpid(receiver, nullptr, 0);
  for (int fd : {ready[0], ready[1], result[0], result[1]}) ::close(fd);
  return seconds;
}

TEST_F(Netns, TenMegabytesOverTwentyMbitTbfTakeFourSeconds) {
  NetnsTopology net(1, {{20e6, 20e6}});
  const double down = timed_transfer(net.ps_namespace(), net.worker_namespace(0),
                                     NetnsTopology::worker_address(0), 10'000'000);
  EXPECT_NEAR(down, 4.0, 0.4) << "10 MB PS -> worker over a 20 Mbit/s tbf link";
  const double up = timed_transfer(net.worker_namespace(0), net.ps_namespace(),
                                   NetnsTopology::ps_address(0), 10'000'000);
  EXPECT_NEAR(up, 4.0, 0.4) << "10 MB worker -> PS over a 20 Mbit/s tbf link";
  net.set_rates(0, 40e6, 40e6);  // live change: twice as fast
  const double faster = timed_transfer(net.ps_namespace(), net.worker_namespace(0),
                                       NetnsTopology::worker_address(0), 10'000'000);
  EXPECT_NEAR(faster, 2.0, 0.2);
}

// --ps-link: the PS behind one more shaped link; the workers' edge links are five times
// faster, so the cloud link sets the PS's pace both ways, and traffic between workers does
// not cross it.
TEST_F(Netns, TheCloudLinkPacesThePsAndLeavesWorkerToWorkerTrafficAlone) {
  NetnsTopology net(2, {{100e6, 100e6}, {100e6, 100e6}}, CloudLinkRates{20e6, 20e6});
  EXPECT_EQ(net.server_address(1), NetnsTopology::kCloudAddress);
  const double in = timed_transfer(net.worker_namespace(0), net.server_namespace(),
                                   net.server_address(0), 10'000'000);
  EXPECT_NEAR(in, 4.0, 0.4) << "10 MB worker -> PS over a 20 Mbit/s cloud link";
  const double out = timed_transfer(net.server_namespace(), net.worker_namespace(1),
                                    NetnsTopology::worker_address(1), 10'000'000);
  EXPECT_NEAR(out, 4.0, 0.4) << "10 MB PS -> worker over a 20 Mbit/s cloud link";
  const double peer = timed_transfer(net.worker_namespace(0), net.worker_namespace(1),
                                     NetnsTopology::worker_address(1), 10'000'000);
  EXPECT_NEAR(peer, 0.8, 0.2) << "10 MB worker -> worker over two 100 Mbit/s edge links";
}

// The launcher starts and waits for its children while another of its threads changes the
// tbf rates (a --link-trace). A child started while a `tc` ran must not inherit the pipe
// that collects tc's output (the thread would wait for the child to exit), and the wait
// for the children must not reap tc (its lost exit status once failed a job with "`tc ...
// qdisc change ...` failed: ").
TEST_F(Netns, RatesChangeWhileTheLauncherStartsAndWaitsForChildren) {
  NetnsTopology net(1, {{50e6, 50e6}});
  const std::string dir = ::testing::TempDir() + "dynacomm_reap_" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0755);
  std::atomic<bool> stop{false};
  std::string failure;
  std::atomic<int> changes{0};
  double slowest_s = 0;
  std::thread changer([&] {
    try {
      while (!stop) {
        const auto t0 = std::chrono::steady_clock::now();
        net.set_rates(0, changes % 2 ? 5e6 : 50e6, 50e6);
        slowest_s =
            std::max(slowest_s,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        ++changes;
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  {
    LocalCluster cluster("/bin/true", dir, std::chrono::seconds(5));
    for (int i = 0; i < 100; ++i) {
      cluster.start_process("sleeper " + std::to_string(i), {"/bin/sleep", "2"}, "sleeper.log");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_NO_THROW(cluster.wait({}, std::chrono::milliseconds(100)));
  }
  stop = true;
  changer.join();
  EXPECT_EQ(failure, "") << "after " << changes << " rate changes";
  EXPECT_LT(slowest_s, 1.0) << "a rate change waited for a child of the launcher to exit";
  EXPECT_GE(changes, 20) << "too few changes overlapped the children to show anything";
  std::system(("rm -rf '" + dir + "'").c_str());
}

// The bench names the congestion control the links' flows use: what a worker's namespace
// really runs, the host's default it inherited.
TEST_F(Netns, NamesTheCongestionControlTheNamespacesRun) {
  NetnsTopology net(1, {{50e6, 10e6}});
  const std::string cc = NetnsTopology::congestion_control();
  ASSERT_FALSE(cc.empty());
  EXPECT_EQ(output_of("ip netns exec " + net.worker_namespace(0) +
                      " cat /proc/sys/net/ipv4/tcp_congestion_control"),
            cc + "\n");
}

TEST_F(Netns, RemovesEverythingAndCleansLeftovers) {
  std::string prefix;
  {
    NetnsTopology net(2, {{50e6, 10e6}, {50e6, 10e6}});
    prefix = net.prefix();
    EXPECT_NE(namespaces().find(prefix + "-w1"), std::string::npos);
  }
  EXPECT_EQ(namespaces().find(prefix + "-"), std::string::npos) << namespaces();
  // A run killed before it could clean up: its launcher pid no longer exists.
  const std::string stale = "dc3ffffe-ps";
  ASSERT_NE(::kill(0x3ffffe, 0), 0);
  ASSERT_EQ(std::system(("ip netns add " + stale).c_str()), 0);
  EXPECT_GE(NetnsTopology::clean_leftovers(), 1);
  EXPECT_EQ(namespaces().find(stale), std::string::npos);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool have_fashion_mnist() {
  struct stat st;
  return ::stat(data::default_fashion_mnist_dir().c_str(), &st) == 0;
}

// Every transfer of kind `cat` ("pull" or "push") in a run's trace.json kept its link busy
// for less than `factor` times its bytes' time at `bps`, plus `slack_ms`; returns how many
// there were.
int expect_busy_within(const std::string& trace_json, const std::string& cat, double bps,
                       double factor, double slack_ms) {
  const nlohmann::json trace = nlohmann::json::parse(read_file(trace_json));
  int transfers = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") != cat) continue;
    ++transfers;
    const double bytes = e["args"]["bytes"].get<double>();
    EXPECT_LT(e["args"]["link_busy_ms"].get<double>(), factor * 8000 * bytes / bps + slack_ms)
        << e.dump();
  }
  return transfers;
}

// Runs `dynacomm train ARGS --out OUT`, its output into OUT.log; returns the exit status.
int train(const std::string& args, const std::string& out) {
  return std::system(
      (std::string(DYNACOMM_EXE) + " train " + args + " --out " + out + " > " + out + ".log 2>&1")
          .c_str());
}

// Runs `dynacomm train COMMON` once over kernel-shaped links (KERNEL_LINK) and once over
// user-space ones (USER_LINK); both must succeed and learn the same weights, bit for bit.
void expect_same_weights(const std::string& name, const std::string& common,
                         const std::string& kernel_link, const std::string& user_link) {
  const std::string dir =
      ::testing::TempDir() + "dynacomm_" + name + "_" + std::to_string(::getpid());
  const std::string train = std::string(DYNACOMM_EXE) + " train " + common;
  ASSERT_EQ(std::system((train + " --net netns " + kernel_link + " --out " + dir + "/k > " + dir +
                         ".k.log 2>&1")
                            .c_str()),
            0)
      << read_file(dir + ".k.log") << read_file(dir + "/k/worker-1.log");
  ASSERT_EQ(
      std::system(
          (train + " " + user_link + " --out " + dir + "/u > " + dir + ".u.log 2>&1").c_str()),
      0)
      << read_file(dir + ".u.log");
  EXPECT_TRUE(read_file(dir + "/k/weights.bin") == read_file(dir + "/u/weights.bin"));
  EXPECT_NE(read_file(dir + "/k/summary.json").find("kernel tbf"), std::string::npos);
  EXPECT_EQ(leftovers(), "") << namespaces();
  std::system(("rm -rf '" + dir + "' '" + dir + ".k.log' '" + dir + ".u.log'").c_str());
}

// `bench --peers ddp --target-accuracy A` trains the PyTorch peer on Fashion-MNIST over the
// same links and reports its time to A beside dynacomm's (bench/peers/ddp.py --data).
TEST_F(Netns, BenchTrainsTheDdpPeerToTheTargetAccuracy) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::string dir =
      ::testing::TempDir() + "dynacomm_ddp_target_" + std::to_string(::getpid());
  ASSERT_EQ(std::system((std::string(DYNACOMM_EXE) +
                         " bench --model cnn --net netns --compress none --peers ddp "
                         "--target-accuracy 0.5 --eval-every 20 --epochs 1 --train-samples 4000 "
                         "--test-samples 500 --down 1gbit --latency 1ms --out " +
                         dir + " > " + dir + ".log 2>&1")
                            .c_str()),
            0)
      << read_file(dir + ".log");
  const nlohmann::json rows = nlohmann::json::parse(read_file(dir + "/codecs.json"));
  ASSERT_EQ(rows.size(), 2u);
  const nlohmann::json& ddp = rows[1];
  EXPECT_EQ(ddp["compress"], "pytorch-ddp");
  ASSERT_EQ(ddp["time_to_accuracy"].size(), 1u) << ddp.dump();
  const nlohmann::json& t = ddp["time_to_accuracy"][0];
  EXPECT_GE(t["accuracy"].get<double>(), 0.5);
  EXPECT_EQ(t["iteration"].get<int>() % 20, 19);  // an evaluation's iteration
  EXPECT_GT(t["wall_s"].get<double>(), 0);
  EXPECT_EQ(leftovers(), "") << namespaces();
  std::system(("rm -rf '" + dir + "' '" + dir + ".log'").c_str());
}

// The whole product over kernel-shaped links: the same weights as over emulated ones.
TEST_F(Netns, TrainOverNamespacesLearnsTheSameWeights) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  expect_same_weights("netns",
                      "--iterations 4 --batch 32 --train-samples 1000 --test-samples 100 "
                      "--latency 2ms --threads 1",
                      "--down 200mbit", "--down 200mbit");
}

// On a link so slow that the last pushes are still crossing it when a worker finishes
// (6.6 s for lenet5's 0.25 MB at 300 kbit/s, more than ZeroMQ's 5 s linger), the worker
// waits for the PS's acks before it leaves: nothing is lost, the job completes.
TEST_F(Netns, SlowLinkLosesNoPush) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  expect_same_weights("slow",
                      "--model lenet5 --iterations 2 --warmup 1 --batch 8 --train-samples 200 "
                      "--test-samples 50 --latency 1ms --threads 1",
                      "--down 300kbit", "--down 1gbit");
}

// --link-trace under --net netns: the launcher changes the tbf rates live (tc qdisc change)
// and the worker's online estimate of its link follows: 50 Mbit/s before, 5 Mbit/s after.
// The change comes early enough for the estimator's last window to be all at 5 Mbit/s on
// any machine. The token bucket lets a transfer after an idle spell start with a 70 kB
// burst, so lenet5's 190 kB pulls can look as fast as 8 Mbit/s. A pull request queued
// behind a push on the uplink must not count as downlink time: while it did, runs read
// 2.7 to 6.2 Mbit/s; since, 5.1 to 6.6.
TEST_F(Netns, LinkTraceChangesTheTbfRateLive) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::string dir = ::testing::TempDir() + "dynacomm_trace_" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0755);
  {
    std::ofstream t(dir + "/trace.csv");
    t << "time_s,down,up,latency\n0,50mbit,50mbit,1ms\n2,5mbit,5mbit,1ms\n";
  }
  ASSERT_EQ(train("--net netns --model lenet5 --scheduler dynacomm --iterations 50 --batch 32"
                  " --train-samples 4000"
                  " --test-samples 100 --down 50mbit --latency 1ms --threads 1 --link-trace " +
                      dir + "/trace.csv",
                  dir + "/run"),
            0)
      << read_file(dir + "/run.log");
  const nlohmann::json summary = nlohmann::json::parse(read_file(dir + "/run/summary.json"));
  const double down = summary["final_estimates"]["link"]["down_bps"].get<double>();
  EXPECT_LT(down, 9e6) << "the estimate did not follow the tbf change to 5 Mbit/s";
  EXPECT_GT(down, 3.5e6) << "the downlink looks slower than its tbf rate";
  EXPECT_EQ(leftovers(), "") << namespaces();
  std::system(("rm -rf '" + dir + "'").c_str());
}

// A slow uplink must not make the downlink look slow: past the warm-up each pull request
// queues on the uplink behind the pushes sent before it (lenet5's 0.25 MB of gradients,
// 1 s at 2 Mbit/s), and that wait is the uplink's. Every traced pull must have kept the
// 50 Mbit/s downlink busy about as long as its bytes take (a 624-byte pull once read
// 998 ms), and the estimates must say 50 and 2 Mbit/s.
TEST_F(Netns, SlowUplinkLeavesTheDownlinkEstimateAlone) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::string dir = ::testing::TempDir() + "dynacomm_asym_" + std::to_string(::getpid());
  // dynacomm's phase-separated plans, as this test was written for (auto may pick a
  // full-duplex one, whose pulls overlap the pushes).
  ASSERT_EQ(
      train("--net netns --model lenet5 --scheduler dynacomm --iterations 8 --warmup 3 --batch 32"
            " --train-samples 1000 --test-samples 100 --down 50mbit --up 2mbit"
            " --latency 1ms --threads 1",
            dir),
      0)
      << read_file(dir + ".log");
  EXPECT_GE(expect_busy_within(dir + "/trace.json", "pull", 50e6, 2, 10), 10)
      << "the trace has too few pulls to show anything";
  const nlohmann::json summary = nlohmann::json::parse(read_file(dir + "/summary.json"));
  const nlohmann::json& link = summary["final_estimates"]["link"];
  EXPECT_GT(link["down_bps"].get<double>(), 30e6) << link.dump();
  EXPECT_LT(link["overhead_down_ms"].get<double>(), 5) << link.dump();
  EXPECT_NEAR(link["up_bps"].get<double>(), 2e6, 0.6e6) << link.dump();
  EXPECT_EQ(leftovers(), "") << namespaces();
  std::system(("rm -rf '" + dir + "' '" + dir + ".log'").c_str());
}

// The reverse: in a full-duplex plan the next iteration's pull replies fill the downlink
// while the pushes cross the uplink, and a push's ack queues behind them. The push is timed
// to its arrival as the PS stamps it, not to its ack (a 10 kB push read 237 ms at 5 Mbit/s,
// 16 ms of data). Bound: 3x the bytes' time + 30 ms (the PS's loop may take a push off its
// socket late; the token bucket's burst only makes pushes look faster).
TEST_F(Netns, PushAcksQueuedBehindPullRepliesLeaveTheUplinkTimesAlone) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::string dir = ::testing::TempDir() + "dynacomm_fd_" + std::to_string(::getpid());
  ASSERT_EQ(train("--net netns --model lenet5 --scheduler dynacomm-fd --iterations 10 --warmup 3"
                  " --batch 32 --train-samples 1000 --test-samples 100 --down 5mbit --up 5mbit"
                  " --latency 1ms --threads 1",
                  dir),
            0)
      << read_file(dir + ".log");
  EXPECT_GE(expect_busy_within(dir + "/trace.json", "push", 5e6, 3, 30), 10)
      << "the trace has too few pushes to show anything";
  EXPECT_EQ(leftovers(), "") << namespaces();
  std::system(("rm -rf '" + dir + "' '" + dir + ".log'").c_str());
}

}  // namespace
}  // namespace dynacomm::cluster

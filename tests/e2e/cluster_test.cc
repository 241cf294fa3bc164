// Real processes on loopback: `dynacomm ps` and `dynacomm worker`s started by the same
// launcher `dynacomm train` uses, a few iterations each, on a slice of Fashion-MNIST.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "cluster/local_cluster.h"
#include "data/fashion_mnist.h"

namespace dynacomm::cluster {
namespace {

bool have_fashion_mnist() {
  struct stat st;
  return ::stat(data::default_fashion_mnist_dir().c_str(), &st) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    dir_ = ::testing::TempDir() + "dynacomm_cluster_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::mkdir(dir_.c_str(), 0755);
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  // The README's two-terminal recipe, in one shell: `dynacomm ps PS_ARGS` on a free
  // loopback port, then `dynacomm worker --ps EP --rank R` plus `worker_args[R]`, all
  // waited for; logs in dir_/ps.log and dir_/worker-R.log. True when every one exited 0.
  bool run_by_hand(const std::string& ps_args, const std::vector<std::string>& worker_args) {
    const std::string exe = DYNACOMM_EXE, ep = dir_ + "/ps.endpoint";
    std::string sh = exe + " ps --listen tcp://127.0.0.1:0 --endpoint-file " + ep + " " + ps_args +
                     " > " + dir_ + "/ps.log 2>&1 & ps=$!; i=0; while [ ! -s " + ep +
                     " ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; ok=0; ";
    for (std::size_t r = 0; r < worker_args.size(); ++r)
      sh += exe + " worker --ps $(cat " + ep + ") --rank " + std::to_string(r) + " " +
            worker_args[r] + " > " + dir_ + "/worker-" + std::to_string(r) + ".log 2>&1 & w" +
            std::to_string(r) + "=$!; ";
    for (std::size_t r = 0; r < worker_args.size(); ++r)
      sh += "wait $w" + std::to_string(r) + " || ok=1; ";
    sh += "wait $ps || ok=1; exit $ok";
    return std::system(("sh -c '" + sh + "'").c_str()) == 0;
  }
  // Runs `dynacomm ARGS --out dir_/NAME`, its output in dir_/NAME.log. On failure: the log.
  ::testing::AssertionResult run_dynacomm(const std::string& name, const std::string& args) {
    const std::string log = dir_ + "/" + name + ".log";
    const std::string cmd = std::string(DYNACOMM_EXE) + " " + args + " --out " + dir_ + "/" + name +
                            " > " + log + " 2>&1";
    if (std::system(cmd.c_str()) == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << read_file(log);
  }
  // `dynacomm train` (lenet5, 2 workers) whose links step from 2 to 100 Mbit/s as
  // iteration 5 starts (a trace keyed by iteration: the same on a busy machine),
  // re-planned (--replan dynamic, threshold 2%) with `flags`, into dir_/replanned; and the
  // same job with the sequential plan on 1 Gbit/s, into dir_/reference, whose weights any
  // plan must reproduce bit for bit. On failure: the log of the run that failed.
  ::testing::AssertionResult step_up_and_reference(int iterations, const std::string& flags) {
    std::ofstream(dir_ + "/step-up.csv")
        << "iteration,down,up,latency\n0,2mbit,2mbit,1ms\n5,100mbit,100mbit,1ms\n";
    const std::string common = "train --model lenet5 --iterations " + std::to_string(iterations) +
                               " --warmup 2 --batch 32 --train-samples 2000"
                               " --test-samples 100 --latency 1ms";
    const std::pair<std::string, std::string> runs[] = {
        {"replanned", " --down 2mbit --link-trace " + dir_ +
                          "/step-up.csv --replan dynamic --replan-threshold 0.02" + flags},
        {"reference", " --down 1gbit --scheduler sequential --replan static"}};
    for (const auto& [name, rest] : runs)
      if (::testing::AssertionResult r = run_dynacomm(name, common + rest); !r) return r;
    return ::testing::AssertionSuccess();
  }
  // `dynacomm train` (lenet5) with a device-slowdown trace of `rows` (after the CSV header)
  // and more flags; the run folder is dir_/name. On failure: the log.
  ::testing::AssertionResult train_with_slowdowns(const std::string& name, const std::string& rows,
                                                  const std::string& flags) {
    const std::string trace = dir_ + "/" + name + ".csv";
    std::ofstream(trace) << "time_s,factor,worker\n" << rows;
    return run_dynacomm(name,
                        "train --model lenet5 --scheduler dynacomm --batch 32 --train-samples 4000"
                        " --test-samples 100 --latency 1ms " +
                            flags + " --device-slowdown-trace " + trace);
  }
  // `dynacomm ARGS --out dir_/NAME` in the background, Ctrl-C'd (SIGINT to the launcher)
  // once worker 0's status is past iteration `at`; its exit code once it is done (-1: it
  // did not start or end in time). Its output in dir_/NAME.log.
  int interrupted_run(const std::string& name, const std::string& args, int at) {
    const std::string out = dir_ + "/" + name, rc = dir_ + "/" + name + ".rc",
                      pid = dir_ + "/" + name + ".pid";
    const std::string sh = std::string(DYNACOMM_EXE) + " " + args + " --out " + out + " > " + dir_ +
                           "/" + name + ".log 2>&1 & echo $! > " + pid + "; wait $!; echo $? > " +
                           rc;
    if (std::system(("sh -c '" + sh + "' &").c_str()) != 0) return -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    auto iteration = [&] {
      const nlohmann::json st = nlohmann::json::parse(read_file(out + "/status-worker0.json"),
                                                      nullptr, /*allow_exceptions=*/false);
      return st.is_object() && st.contains("iteration") ? st["iteration"].get<int>() : 0;
    };
    while (std::chrono::steady_clock::now() < deadline && iteration() < at)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const int launcher = std::atoi(read_file(pid).c_str());
    if (launcher <= 0 || ::kill(launcher, SIGINT) != 0) return -1;
    const auto done_by = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < done_by && read_file(rc).empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return read_file(rc).empty() ? -1 : std::atoi(read_file(rc).c_str());
  }
  std::string dir_;
};

// Scheduling never changes the learning: every strategy, bit for bit.
// Every strategy's bit-identical weights and one worker equal to local training:
// src/worker/threaded_cluster_test.cc, with the PS and workers as threads.

// bench/fd_replay.py reads a priority (P3) run's folder: its traced iterations replayed,
// one line each with a median. (That the credit waits a round trip per ack is checked
// against a fake clock: worker/push_queue_test.cc.)
TEST_F(ClusterTest, FdReplayReadsAPriorityRun) {
  const std::string out = dir_ + "/p3";
  ASSERT_TRUE(run_dynacomm("p3",
                           "train --model cnn --scheduler p3 --iterations 5 --warmup 2 --batch 32"
                           " --train-samples 1000 --test-samples 100 --down 1gbit --latency 50ms"
                           " --threads 1"));
  const auto trace = nlohmann::json::parse(read_file(out + "/trace.json"));
  std::set<std::int64_t> pushed;  // iterations with worker 0's pushes traced
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == "push" && e.value("pid", -1) == 0)
      pushed.insert(e["args"]["iteration"].get<std::int64_t>());
  ASSERT_GE(pushed.size(), 2u);
  const std::string replay = dir_ + "/replay.txt";
  ASSERT_EQ(std::system(("/usr/bin/python3 " DYNACOMM_FD_REPLAY " " + out + " --plan p3 > " +
                         replay + " 2>&1")
                            .c_str()),
            0)
      << read_file(replay);
  std::istringstream lines(read_file(replay));
  int replays = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string mode, median;
    double ms = 0;
    if (words >> mode >> median >> ms && median == "median" && mode != "measured") {
      ++replays;
      EXPECT_GT(ms, 0) << line;
    }
  }
  EXPECT_EQ(replays, 3) << read_file(replay);
}

// The pids of the processes whose command line mentions `needle`.
std::vector<int> processes_mentioning(const std::string& needle) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (!proc) return pids;
  while (const dirent* e = ::readdir(proc)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0 || pid == ::getpid()) continue;
    std::string cmdline = read_file("/proc/" + std::string(e->d_name) + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos && cmdline.find("sh -c") != 0)
      pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

// SIGKILL of `dynacomm train` takes its PS and workers with it: nothing is left training
// unsupervised. What it learned is kept: the PS's checkpoints, and rank 0's model.pt of
// the newest (a zip archive, as torch.save writes).
TEST_F(ClusterTest, KillingTheLauncherTakesItsProcessesWithIt) {
  const std::string out = dir_ + "/killed";
  const std::string sh = std::string(DYNACOMM_EXE) +
                         " train --epochs 50 --train-samples 1000 --test-samples 100"
                         " --checkpoint-every 5 --down 1gbit --latency 1ms --out " +
                         out + " > " + dir_ + "/killed.log 2>&1 & echo $! > " + dir_ +
                         "/killed.pid";
  ASSERT_EQ(std::system(("sh -c '" + sh + "'").c_str()), 0);
  const int launcher = std::atoi(read_file(dir_ + "/killed.pid").c_str());
  ASSERT_GT(launcher, 0);
  // Running once the PS and both workers are up (the workers' status files are written).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline &&
         (processes_mentioning(out).size() < 4 ||  // launcher, PS, two workers
          read_file(out + "/model.pt").empty()))
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(processes_mentioning(out).size(), 4u) << read_file(dir_ + "/killed.log");
  ASSERT_EQ(::kill(launcher, SIGKILL), 0);
  EXPECT_EQ(read_file(out + "/model.pt").substr(0, 2), "PK") << read_file(dir_ + "/killed.log");
  const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < gone_by && !processes_mentioning(out).empty())
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::vector<int> left = processes_mentioning(out);
  for (int pid : left) ::kill(pid, SIGKILL);  // clean up even when the test fails
  EXPECT_TRUE(left.empty()) << left.size() << " processes outlived the launcher";
}

// A worker killed (SIGKILL, worker/fault.h) in the forward pass, between its pushes or
// while its pulls are out is started again by `train --max-restarts`, rejoins the running
// job at the PS's newest version, and the job finishes: nothing else restarts.
TEST_F(ClusterTest, AWorkerKilledAtAnyPhaseIsStartedAgainAndRejoins) {
  for (const char* phase : {"forward", "push", "pull"}) {
    SCOPED_TRACE(phase);
    const std::string name = std::string("killed-in-") + phase;
    ::setenv("DYNACOMM_FAULT", (std::string(phase) + ":8:" + dir_ + "/" + name + ".fired").c_str(),
             1);
    const ::testing::AssertionResult ran = run_dynacomm(
        name,
        "train --model lenet5 --iterations 24 --warmup 2 --batch 32 --train-samples 2000"
        " --test-samples 100 --down 1gbit --latency 1ms --max-restarts 1");
    ::unsetenv("DYNACOMM_FAULT");
    EXPECT_TRUE(ran);
    const std::string log = read_file(dir_ + "/" + name + ".log");
    EXPECT_NE(log.find("failed (killed by signal 9); started it again (restart 1 of 1), it "
                       "rejoins the job"),
              std::string::npos)
        << log;
    const std::string ps = read_file(dir_ + "/" + name + "/ps.log");
    // The PS drops it as its connection closes (or as its new process joins, if that is
    // heard first); the other goes on alone meanwhile.
    EXPECT_TRUE(ps.find("its connection closed") != std::string::npos ||
                ps.find("joined again from a new connection") != std::string::npos)
        << ps;
    // At the newest version then: 7 at least (a full-duplex plan's pulls of 8 may have gone
    // out early), at most 24 (the other finished first: it joins the ended job, and rank 0
    // fetches the final weights and evaluates them).
    const std::size_t at = ps.find("joined the running job at iteration ");
    ASSERT_NE(at, std::string::npos) << ps;
    const int rejoined = std::atoi(ps.c_str() + at + 36);
    EXPECT_TRUE(rejoined >= 7 && rejoined <= 24) << ps;
    EXPECT_EQ(read_file(dir_ + "/" + name + "/weights.bin").size(), 246824u);  // lenet5
  }
}

// The PS killed (SIGKILL) in the middle of a job, and the job resumed from its newest
// checkpoint with `train --resume`: the final weights equal an uninterrupted run's, bit for
// bit (cnn: dropout's masks follow from seed, rank and iteration). A checkpoint that does
// not fit the job's flags is refused, naming the flag.
TEST_F(ClusterTest, ThePsKilledAndResumedFromItsCheckpointGivesTheSameWeights) {
  const std::string job =
      "train --model cnn --iterations 40 --warmup 2 --batch 32 --train-samples 2000"
      " --test-samples 100 --down 1gbit --latency 1ms";
  ASSERT_TRUE(run_dynacomm("whole", job));
  // The same job, its PS killed once the checkpoint of iteration 10 is on disk.
  const std::string out = dir_ + "/killed";
  const std::string sh = std::string(DYNACOMM_EXE) + " " + job + " --checkpoint-every 5 --out " +
                         out + " > " + dir_ + "/killed.log 2>&1 &";
  ASSERT_EQ(std::system(("sh -c '" + sh + "'").c_str()), 0);
  struct stat st;
  const std::string ten = out + "/checkpoints/ckpt-000000000010.bin";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && ::stat(ten.c_str(), &st) != 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(::stat(ten.c_str(), &st), 0) << read_file(dir_ + "/killed.log");
  int killed = 0;
  for (int pid : processes_mentioning(out + "/trace-ps.json")) killed += ::kill(pid, SIGKILL) == 0;
  EXPECT_EQ(killed, 1);
  const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < gone_by && !processes_mentioning(out).empty())
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(processes_mentioning(out).empty());
  const std::string log = read_file(dir_ + "/killed.log");
  EXPECT_NE(log.find("the PS failed (killed by signal 9)"), std::string::npos) << log;
  EXPECT_TRUE(read_file(out + "/weights.bin").empty()) << "the killed run finished";

  EXPECT_FALSE(run_dynacomm("mismatched", job + " --lr 0.1 --resume " + out + "/checkpoints"));
  const std::string refused = read_file(dir_ + "/mismatched.log");
  EXPECT_NE(refused.find("no usable checkpoint in " + out + "/checkpoints"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("it was taken with --lr 0.05, the PS runs --lr 0.1"), std::string::npos)
      << refused;

  ASSERT_TRUE(run_dynacomm("resumed", job + " --resume " + out + "/checkpoints"));
  const std::string ps = read_file(dir_ + "/resumed/ps.log");
  EXPECT_NE(ps.find("resumed the job at iteration "), std::string::npos) << ps;
  const std::string whole = read_file(dir_ + "/whole/weights.bin");
  ASSERT_EQ(whole.size(), 3297832u);
  EXPECT_TRUE(read_file(dir_ + "/resumed/weights.bin") == whole) << "not bit for bit";

  // Under --max-restarts, train starts the killed PS again from its checkpoint, with
  // every worker, by itself; still bit for bit.
  const std::string again = dir_ + "/restarted";
  const std::string sh2 = std::string(DYNACOMM_EXE) + " " + job +
                          " --checkpoint-every 5 --max-restarts 1 --out " + again + " > " + dir_ +
                          "/restarted.log 2>&1; echo $? > " + dir_ + "/restarted.rc";
  ASSERT_EQ(std::system(("sh -c '" + sh2 + "' &").c_str()), 0);
  const std::string ten2 = again + "/checkpoints/ckpt-000000000010.bin";
  const auto deadline2 = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline2 && ::stat(ten2.c_str(), &st) != 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(::stat(ten2.c_str(), &st), 0) << read_file(dir_ + "/restarted.log");
  killed = 0;
  for (int pid : processes_mentioning(again + "/trace-ps.json"))
    killed += ::kill(pid, SIGKILL) == 0;
  EXPECT_EQ(killed, 1);
  const auto done_by = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < done_by && read_file(dir_ + "/restarted.rc").empty())
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string log2 = read_file(dir_ + "/restarted.log");
  EXPECT_EQ(read_file(dir_ + "/restarted.rc"), "0\n") << log2;
  EXPECT_NE(log2.find("the PS failed (killed by signal 9); started it again from its newest "
                      "checkpoint (ckpt-0000000000"),
            std::string::npos)
      << log2;
  EXPECT_TRUE(read_file(again + "/weights.bin") == whole) << "not bit for bit";
}

// Ctrl-C of `train`: the workers stop at their next iteration, rank 0 evaluates and saves
// what the job has learned, the PS checkpoints it, and train says so and exits 130.
TEST_F(ClusterTest, AnInterruptedTrainSavesWhatItLearned) {
  const std::string out = dir_ + "/interrupted";
  // Interrupted once worker 0's status says it is past iteration 20 (of 620).
  const int rc = interrupted_run("interrupted",
                                 "train --model lenet5 --epochs 20 --train-samples 2000"
                                 " --test-samples 100 --down 1gbit --latency 1ms",
                                 20);
  const std::string log = read_file(dir_ + "/interrupted.log");
  EXPECT_EQ(rc, 130) << log;
  EXPECT_NE(log.find("interrupted before iteration "), std::string::npos) << log;
  const nlohmann::json summary = nlohmann::json::parse(read_file(out + "/summary.json"));
  EXPECT_GT(summary["interrupted_at"].get<int>(), 0);
  EXPECT_GT(summary["test_accuracy"].get<double>(), 0.1);
  EXPECT_EQ(read_file(out + "/weights.bin").size(), 246824u);
  EXPECT_FALSE(read_file(out + "/metrics.csv").empty());
  const std::string ps = read_file(out + "/ps.log");
  EXPECT_NE(ps.find("checkpoint of iteration "), std::string::npos) << ps;
  for (int pid : processes_mentioning(out)) ::kill(pid, SIGKILL);
}

// Compression keeps state on the workers (DGC's momentum and accumulation here) and, with
// compressed pulls, on the PS (the public copy every worker holds): a train interrupted
// with Ctrl-C saves both (beside and in the PS's checkpoint), and resumed, the workers take
// theirs up again and get the public copy, so the job ends with the weights of one that
// never stopped, bit for bit.
TEST_F(ClusterTest, AnInterruptedCompressedTrainResumesBitForBit) {
  const std::string job =
      "train --model lenet5 --iterations 60 --warmup 2 --batch 32 --train-samples 2000"
      " --test-samples 100 --down 20mbit --latency 1ms --scheduler sequential --replan static"
      " --compress dgc:0.05:10 --compress-pulls topk:0.1";
  ASSERT_TRUE(run_dynacomm("whole", job));
  const std::string out = dir_ + "/stopped";
  ASSERT_EQ(interrupted_run("stopped", job, 20), 130) << read_file(dir_ + "/stopped.log");
  for (int r = 0; r < 2; ++r)
    EXPECT_FALSE(read_file(out + "/codec-state-worker" + std::to_string(r) + ".bin").empty()) << r;

  ASSERT_TRUE(run_dynacomm("resumed", job + " --resume " + out + "/checkpoints"));
  for (int r = 0; r < 2; ++r) {
    const std::string log = read_file(dir_ + "/resumed/worker-" + std::to_string(r) + ".log");
    EXPECT_NE(log.find("took up the compression state (residuals) it had before iteration"),
              std::string::npos)
        << log;
  }
  const std::string whole = read_file(dir_ + "/whole/weights.bin");
  ASSERT_EQ(whole.size(), 246824u);
  EXPECT_TRUE(read_file(dir_ + "/resumed/weights.bin") == whole) << "not bit for bit";
}

// One worker through the PS computes exactly what --local training computes.
// The embedded default as a user runs it: summary, metrics, weights and one merged trace.
TEST_F(ClusterTest, TrainWritesTheRunFolder) {
  const std::string out = dir_ + "/train";
  ASSERT_TRUE(run_dynacomm("train",
                           "train --iterations 4 --warmup 1 --batch 32 --train-samples 1000"
                           " --test-samples 100 --down 1gbit --latency 1ms"));
  const std::string log = read_file(dir_ + "/train.log");
  EXPECT_NE(log.find("median iteration"), std::string::npos) << log;
  // --warmup 1 runs no warm sequential iteration: the summary says sequential is predicted.
  EXPECT_NE(log.find("predicted, not measured"), std::string::npos) << log;
  nlohmann::json summary = nlohmann::json::parse(read_file(out + "/summary.json"));
  for (const char* key : {"scheduler", "model", "workers", "iterations", "median_iteration_ms",
                          "test_accuracy", "bytes_up", "bytes_down"})
    EXPECT_TRUE(summary.contains(key)) << key;
  EXPECT_EQ(summary["workers"], 2);
  EXPECT_EQ(summary["iterations"], 4);
  EXPECT_GT(summary["bytes_up"].get<double>(), 4 * 3e6);  // cnn is 3.3 MB, pushed 4 times
  nlohmann::json trace = nlohmann::json::parse(read_file(out + "/trace.json"));
  std::set<std::pair<int, std::string>> seen;  // (worker, category)
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") seen.insert({e["pid"].get<int>(), e["cat"].get<std::string>()});
  for (int w : {0, 1})
    for (const char* cat : {"pull", "forward", "backward", "push"})
      EXPECT_TRUE(seen.count({w, cat})) << "worker " << w << " has no " << cat << " events";
  for (const char* cat : {"ps-pull", "ps-push", "ps-update"})  // the PS is process 2
    EXPECT_TRUE(seen.count({2, cat})) << "the PS has no " << cat << " events";
  // The overheads planned for were fitted from the warm-up's transfers.
  EXPECT_GE(summary["measured_link"]["down"]["transfers"].get<int>(), 1);
  EXPECT_GE(summary["measured_link"]["planned_overhead_up_ms"].get<double>(), 0.0);
  EXPECT_EQ(read_file(out + "/weights.bin").size(), 3297832u);
  // Compute under a busy link: fitted from the warm-up's units (one sequential iteration
  // here: nothing overlapped, so no stretch is told), and every iteration's compute has
  // its CPU time beside it, never more than the wall time it was measured in.
  const nlohmann::json& stretch = summary["measured_link"]["compute_stretch"];
  EXPECT_GT(stretch["spans"].get<int>(), 0);
  EXPECT_GE(stretch["idle_wall_per_cpu"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(stretch["up"].get<double>(), 1);
  EXPECT_FALSE(stretch["fitted_up"].get<bool>());
  // (The last four columns: an earlier one may hold a quoted reason with commas.) The
  // stretch the estimates held: none in the warm-up, the fit (refitted online) after it.
  std::istringstream metrics(read_file(out + "/metrics.csv"));
  std::string line;
  std::getline(metrics, line);
  ASSERT_NE(line.find(",compute_ms,compute_cpu_ms,stretch_down,stretch_up"), std::string::npos)
      << line;
  int rows = 0;
  while (std::getline(metrics, line)) {
    std::vector<std::string> last(4);
    std::size_t end = line.size();
    for (int k = 3; k >= 0; --k) {
      const std::size_t comma = line.rfind(',', end - 1);
      ASSERT_NE(comma, std::string::npos) << line;
      last[static_cast<std::size_t>(k)] = line.substr(comma + 1, end - comma - 1);
      end = comma;
    }
    const double wall = std::stod(last[0]);
    const double cpu = std::stod(last[1]);
    EXPECT_GT(cpu, 0) << line;
    EXPECT_LE(cpu, wall * 1.01 + 1) << line;  // CPU time cannot outrun the wall clock
    if (rows == 0) {
      EXPECT_EQ(last[2] + last[3], "") << line;
    } else {
      for (const std::string& x : {last[2], last[3]}) {
        ASSERT_FALSE(x.empty()) << line;
        EXPECT_GE(std::stod(x), 1.0) << line;
        EXPECT_LE(std::stod(x), 10.0) << line;
      }
    }
    ++rows;
  }
  EXPECT_EQ(rows, 4);
}

// dynacomm bench: strategies taking turns on one cluster; the results folder a user reads.
TEST_F(ClusterTest, BenchComparesStrategiesSideBySide) {
  const std::string out = dir_ + "/bench";
  ASSERT_TRUE(
      run_dynacomm("bench",
                   "bench --model cnn --schedulers sequential,dynacomm,p3 --iterations 2"
                   " --block 3 --settle 2 --batch 16 --train-samples 1000 --test-samples 100"
                   " --sweep-bandwidth 200mbit,1gbit --latency 1ms"));
  nlohmann::json rows = nlohmann::json::parse(read_file(out + "/bench.json"));
  ASSERT_EQ(rows.size(), 6u);  // 3 strategies x 2 bandwidths
  for (const auto& r : rows) {
    for (const char* key :
         {"scheduler", "model", "workers", "down_bps", "up_bps", "latency_ms", "median_ms",
          "min_ms", "max_ms", "predicted_ms", "ideal_ms", "speedup_vs_sequential"})
      EXPECT_TRUE(r.contains(key)) << key;
    // Not measured: the first two iterations of each turn (--settle 2), and the job's last
    // (final fetch), which is one the bench adds so that every strategy gets the same count.
    EXPECT_EQ(r["iterations"], 2) << r["scheduler"];
    EXPECT_LE(r["min_ms"].get<double>(), r["median_ms"].get<double>());
    EXPECT_LE(r["median_ms"].get<double>(), r["max_ms"].get<double>());
    EXPECT_GT(r["predicted_ms"].get<double>(), 0);
    // Each measured iteration predicted from the estimates of the iterations before it.
    ASSERT_TRUE(r["predicted_online_ms"].is_number()) << r["scheduler"];
    EXPECT_GT(r["predicted_online_ms"].get<double>(), 0);
    // The job's: the largest of the workers' own predictions, worker 0's among them.
    EXPECT_GE(r.value("predicted_slowest_ms", 0.0), r["predicted_ms"].get<double>() - 1e-3) << r;
    if (r["scheduler"] == "sequential") {
      EXPECT_DOUBLE_EQ(r["speedup_vs_sequential"].get<double>(), 1.0);
    }
    // A full-duplex plan is also predicted for the two workers' spread of compute.
    EXPECT_EQ(r.contains("predicted_workers_ms"), r["scheduler"] == "p3") << r;
    if (r["scheduler"] == "p3") {
      EXPECT_GT(r["predicted_workers_ms"].get<double>(), 0);
    }
  }
  EXPECT_EQ(rows[0]["down_bps"], 200e6);
  EXPECT_EQ(rows[5]["down_bps"], 1e9);
  EXPECT_NE(read_file(out + "/bench.md").find("Full-duplex plans, predicted for 2 workers"),
            std::string::npos);
  for (const char* f :
       {"bench.csv", "bench.md", "bench-200mbit.svg", "gantt-1gbit.svg", "speedup.svg"})
    EXPECT_FALSE(read_file(out + "/" + f).empty()) << f;
  EXPECT_NE(read_file(out + "/gantt-1gbit.svg").find(">dynacomm<"), std::string::npos);
  EXPECT_NE(read_file(out + "/bench.md").find("turns of 3 iterations; the first 2 of each turn"),
            std::string::npos);
}

// The codecs' bench to a target accuracy: one job per codec, each stopped by the launcher
// once rank 0's evaluation reached the target, with the time, iterations and bytes to it.
TEST_F(ClusterTest, BenchTrainsEachCodecToATargetAccuracyAndStops) {
  const std::string out = dir_ + "/codecs";
  ASSERT_TRUE(
      run_dynacomm("codecs",
                   "bench --model lenet5 --compress none,topk:0.05 --target-accuracy 0.3"
                   " --eval-every 4 --epochs 20 --batch 32 --train-samples 2000"
                   " --test-samples 200 --down 1gbit --latency 1ms --scheduler sequential"));
  const nlohmann::json rows = nlohmann::json::parse(read_file(out + "/codecs.json"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["compress"], "none");
  EXPECT_EQ(rows[1]["compress"], "topk:0.05");
  for (const auto& r : rows) {
    ASSERT_EQ(r["time_to_accuracy"].size(), 1u) << r;
    const nlohmann::json& t = r["time_to_accuracy"][0];
    EXPECT_TRUE(t["reached"].get<bool>()) << t;
    EXPECT_GE(t["accuracy"].get<double>(), 0.3);
    EXPECT_EQ((t["iteration"].get<int>() + 1) % 4, 0) << t;  // evaluated every 4th
    EXPECT_GT(t["wall_s"].get<double>(), 0);
    EXPECT_GT(t["eval_s"].get<double>(), 0);
    EXPECT_GT(t["bytes_up"].get<double>(), 0);
  }
  // Top-k at 5% sends about a tenth of the dense bytes up (values and indices).
  EXPECT_LT(rows[1]["bytes_up_per_iteration"].get<double>(),
            0.2 * rows[0]["bytes_up_per_iteration"].get<double>());
  // Each job stopped after the target, far before its 20 epochs (620 iterations): the
  // launcher looks twice a second, a few dozen of these short iterations at most.
  for (const char* run : {"/none", "/topk-0.05"}) {
    const nlohmann::json summary = nlohmann::json::parse(read_file(out + run + "/summary.json"));
    EXPECT_GT(summary["interrupted_at"].get<int>(),
              summary["time_to_accuracy"]["iteration"].get<int>())
        << run;
    EXPECT_LT(summary["interrupted_at"].get<int>(), 300) << run;
  }
  for (const char* f : {"codecs.md", "codecs.csv", "codecs.svg", "accuracy.svg"})
    EXPECT_FALSE(read_file(out + "/" + f).empty()) << f;
}

// The synchronisation modes side by side, one job each, with worker 2 computing 20x slower:
// under backup:1 its late pushes are dropped (the PS says how many), under asp the job ends
// with rank 0 (the straggler is stopped, not waited for), local SGD pushes once a round
// (its spec's comma kept within the list), and each run says its mode.
TEST_F(ClusterTest, BenchComparesSyncModesWithAStraggler) {
  const std::string out = dir_ + "/sync";
  ASSERT_TRUE(run_dynacomm("sync",
                           "bench --model lenet5 --workers 3 --sync bsp,backup:1,asp,local:2,warmup=4"
                           " --iterations 6 --batch 32 --train-samples 1000 --test-samples 100"
                           " --down 1gbit --latency 1ms --scheduler sequential"
                           " --worker-slowdown 2:20"));
  const nlohmann::json rows = nlohmann::json::parse(read_file(out + "/sync.json"));
  ASSERT_EQ(rows.size(), 4u);
  const char* modes[] = {"bsp", "backup:1", "asp", "local:2,warmup=4"};
  const char* dirs[] = {"/bsp", "/backup-1", "/asp", "/local-2-warmup-4"};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(rows[k]["sync"], modes[k]);
    const nlohmann::json summary =
        nlohmann::json::parse(read_file(out + dirs[k] + "/summary.json"));
    EXPECT_EQ(summary["sync"], modes[k]);
    EXPECT_GT(summary["test_accuracy"].get<double>(), 0);
  }
  // Local SGD's measured steps 3..8: BSP's 3, then rounds of 2 from step 4 (pushes at 5, 7).
  EXPECT_NEAR(rows[3]["bytes_up_per_iteration"].get<double>(),
              rows[0]["bytes_up_per_iteration"].get<double>() / 2, 1);
  const std::string backup = read_file(out + "/backup-1/ps.log");
  const auto at = backup.find("--sync backup:1: ");
  ASSERT_NE(at, std::string::npos) << backup;
  // Late pushes dropped; unless worker 2, whose start the other tests' load slowed too, said
  // hello only once the others had made the job's rounds (seen in CI): then it joined the
  // running job, and nothing of it was late.
  if (backup.find("rank 2 joined the running job") == std::string::npos) {
    EXPECT_GT(std::atoi(backup.c_str() + at + 17), 0) << backup;
  }
  EXPECT_NE(read_file(dir_ + "/sync.log").find("under --sync asp the job ends with it"),
            std::string::npos);
  for (const char* f : {"sync.md", "sync.csv", "sync.svg"})
    EXPECT_FALSE(read_file(out + "/" + f).empty()) << f;
}

// --arch lists: one job per architecture, the all-reduce and gossip ones without a PS; every
// bucket rule learns the same weights, bit for bit (collective/ring_group.h).
TEST_F(ClusterTest, BenchComparesArchitectures) {
  const std::string out = dir_ + "/arch";
  ASSERT_TRUE(
      run_dynacomm("arch",
                   "bench --model lenet5 --workers 3 --arch ps,allreduce,allreduce:layerwise,gossip"
                   " --iterations 4 --batch 32 --train-samples 1000 --test-samples 100"
                   " --down 1gbit --latency 1ms"));
  const nlohmann::json rows = nlohmann::json::parse(read_file(out + "/arch.json"));
  ASSERT_EQ(rows.size(), 4u);
  const char* archs[] = {"ps", "allreduce:planned", "allreduce:layerwise", "gossip:ring"};
  const char* dirs[] = {"/ps", "/allreduce", "/allreduce-layerwise", "/gossip"};
  for (int k = 0; k < 4; ++k) {
    const nlohmann::json summary =
        nlohmann::json::parse(read_file(out + dirs[k] + "/summary.json"));
    EXPECT_EQ(summary["arch"], archs[k]);
    EXPECT_GT(summary["test_accuracy"].get<double>(), 0);
    EXPECT_GT(rows[k]["bytes_up_per_iteration"].get<double>(), 0);
    EXPECT_EQ(read_file(out + dirs[k] + "/ps.log").empty(), k > 0) << dirs[k];
  }
  EXPECT_GT(rows[1]["predicted_ms"].get<double>(), 0);
  const std::string planned = read_file(out + "/allreduce/weights.bin");
  EXPECT_EQ(planned.size(), 246824u);
  EXPECT_TRUE(planned == read_file(out + "/allreduce-layerwise/weights.bin"));
  EXPECT_EQ(read_file(out + "/gossip/weights.bin").size(), 246824u);
  EXPECT_FALSE(planned == read_file(out + "/gossip/weights.bin"));
  EXPECT_GT(rows[3]["predicted_ms"].get<double>(), 0);
}

// The user's own data: a folder of .npy arrays (3 x 16 x 16 images, 4 classes, written by
// examples/make_npy_dataset.py); the model is built for their shape and classes, and learns.
TEST_F(ClusterTest, TrainsOnAFolderOfNpyArrays) {
  const std::string data = dir_ + "/squares";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + std::string(DYNACOMM_MAKE_NPY_DATASET) + " " + data +
                         " > /dev/null")
                            .c_str()),
            0);
  ASSERT_TRUE(run_dynacomm("npy", "train --data-dir " + data +
                                      " --workers 2 --model cnn --iterations 40 --down 1gbit"
                                      " --latency 1ms"));
  const nlohmann::json summary = nlohmann::json::parse(read_file(dir_ + "/npy/summary.json"));
  EXPECT_EQ(summary["profile"]["input"], "3x16x16");
  EXPECT_GT(summary["test_accuracy"].get<double>(), 0.9) << "4 classes, 500 test images";
}

// model.pt, rank 0's trained model as a state_dict: PyTorch's torch.load reads it, the
// same architecture in PyTorch takes it strictly, and scores what dynacomm reported on the
// whole test set; `dynacomm export` makes the same from the PS's last checkpoint.
TEST_F(ClusterTest, TheExportedModelLoadsIntoPyTorchWithTheSameAccuracy) {
  const std::string out = dir_ + "/export";
  ASSERT_TRUE(run_dynacomm("export",
                           "train --workers 2 --model cnn --iterations 20 --train-samples 2000"
                           " --down 1gbit --latency 1ms --checkpoint-every 10"));
  ASSERT_TRUE(run_dynacomm("from-checkpoint", "export --checkpoint " + out + "/checkpoints"));
  EXPECT_EQ(read_file(dir_ + "/from-checkpoint/model.pt"), read_file(out + "/model.pt"));
  EXPECT_EQ(read_file(dir_ + "/from-checkpoint/weights.bin"), read_file(out + "/weights.bin"));
  const nlohmann::json summary = nlohmann::json::parse(read_file(out + "/summary.json"));
  const std::string got = dir_ + "/export-pytorch.json";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + std::string(DYNACOMM_EVALUATE_MODEL_PT) + " " + out +
                         " > " + got + " 2>&1")
                            .c_str()),
            0)
      << read_file(got);
  const nlohmann::json pytorch = nlohmann::json::parse(read_file(got));
  EXPECT_EQ(pytorch["tensors"], 8);  // 4 units, a weight and a bias each
  EXPECT_GT(summary["test_accuracy"].get<double>(), 0.3);
  EXPECT_NEAR(pytorch["test_accuracy"].get<double>(), summary["test_accuracy"].get<double>(),
              1e-4);  // one image in 10,000
}

// --model FILE.pt: torchvision's resnet18 as a TorchScript nn.Sequential (the example
// script), started from the zoo resnet18's initial weights, trains through PS and workers
// to the zoo resnet18's weights bit for bit; its model.pt is the module itself.
TEST_F(ClusterTest, ATorchScriptResnet18TrainsToTheZoosBitsForBit) {
  ASSERT_TRUE(run_dynacomm("init", "export --model resnet18"));
  const std::string file = dir_ + "/resnet18.pt";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + std::string(DYNACOMM_TORCHSCRIPT_MODEL) + " " +
                         file + " --init " + dir_ + "/init/model.pt > " + dir_ + "/script.log 2>&1")
                            .c_str()),
            0)
      << read_file(dir_ + "/script.log");
  const std::string job =
      " --workers 2 --iterations 3 --batch 8 --train-samples 400"
      " --test-samples 100 --down 1gbit --latency 1ms";
  ASSERT_TRUE(run_dynacomm("zoo", "train --model resnet18" + job));
  ASSERT_TRUE(run_dynacomm("script", "train --model " + file + job));
  const std::string zoo = read_file(dir_ + "/zoo/weights.bin");
  ASSERT_EQ(zoo.size(), 11172810u * 4);
  EXPECT_TRUE(zoo == read_file(dir_ + "/script/weights.bin")) << "the weights differ";
  EXPECT_NE(zoo, read_file(dir_ + "/init/weights.bin")) << "nothing was trained";
  EXPECT_EQ(read_file(dir_ + "/script/model.pt").substr(0, 2), "PK");  // a TorchScript zip
}

// --ps-link under the user-space emulation: both workers' pushes (and the PS's replies)
// queue in one shared token bucket each way, so an iteration takes at least the time the
// 10 Mbit/s cloud link needs for both workers' gradients, though each edge is 1 Gbit/s;
// the link's file goes with the job.
TEST_F(ClusterTest, AUserSpaceCloudLinkIsSharedByTheWorkers) {
  const std::string out = dir_ + "/cloud-user";
  ASSERT_TRUE(run_dynacomm("cloud-user",
                           "train --ps-link 10mbit --workers 2 --model lenet5 --iterations 8"
                           " --train-samples 1000 --test-samples 100 --down 1gbit --latency 1ms"
                           " --scheduler sequential"));
  const nlohmann::json summary = nlohmann::json::parse(read_file(out + "/summary.json"));
  const double both_gradients_ms = 2 * 246824 * 8 / 10e6 * 1e3;  // 395 ms
  EXPECT_GE(summary["median_iteration_ms"].get<double>(), both_gradients_ms) << summary;
  EXPECT_TRUE(read_file(out + "/cloud-link").empty()) << "the link's file stayed";
}

// --arch auto: the launcher profiles the model, predicts every architecture the flags allow,
// runs a short trial of each one predicted within 2x of the fastest, and runs the fastest
// measured (the fastest predicted when fewer than two were tried); the summary says which
// and why. With compressed pushes only the PS fits.
TEST_F(ClusterTest, AutoArchitectureRunsTheFastestOfItsTrialsAndSaysSo) {
  const std::string out = dir_ + "/arch-auto";
  ASSERT_TRUE(run_dynacomm("arch-auto",
                           "train --arch auto --workers 3 --model lenet5 --iterations 8"
                           " --train-samples 1000 --test-samples 100 --down 100mbit"
                           " --arch-trials 2"));
  const nlohmann::json summary = nlohmann::json::parse(read_file(out + "/summary.json"));
  const nlohmann::json& choice = summary["arch_choice"];
  ASSERT_EQ(choice["predictions"].size(), 3u) << choice;
  double best = 1e300, best_measured = 1e300;
  std::string fastest, fastest_measured;
  for (const auto& p : choice["predictions"])
    if (p["predicted_ms"].get<double>() < best) {
      best = p["predicted_ms"].get<double>();
      fastest = p["arch"].get<std::string>();
    }
  int tried = 0;
  for (const auto& p : choice["predictions"]) {
    const std::string arch = p["arch"].get<std::string>();
    const bool near = p["predicted_ms"].get<double>() <= 2 * best;
    EXPECT_EQ(p.contains("measured_ms"), near) << p;  // tried: exactly those near the fastest
    EXPECT_EQ(read_file(out + "/trial-" + arch + "/summary.json").empty(), !near) << arch;
    EXPECT_TRUE(read_file(out + "/trial-" + arch + "/weights.bin").empty()) << "kept: " << arch;
    if (!near) continue;
    ++tried;
    EXPECT_GT(p["measured_ms"].get<double>(), 0) << p;
    if (p["measured_ms"].get<double>() < best_measured) {
      best_measured = p["measured_ms"].get<double>();
      fastest_measured = arch;
    }
  }
  const std::string want = tried >= 2 ? fastest_measured : fastest;
  EXPECT_EQ(choice["chosen"], want) << choice;
  EXPECT_EQ(summary["arch"].get<std::string>().rfind(want, 0), 0u) << summary["arch"];
  EXPECT_NE(read_file(dir_ + "/arch-auto.log").find("--arch auto: " + want + ", predicted"),
            std::string::npos);
  if (tried >= 2) {
    EXPECT_NE(read_file(dir_ + "/arch-auto.log").find("measured in trials"), std::string::npos);
  }
  const std::string only_ps = dir_ + "/arch-auto-topk";
  ASSERT_TRUE(run_dynacomm("arch-auto-topk",
                           "train --arch auto --compress topk:0.1 --workers 2 --model lenet5"
                           " --iterations 6 --train-samples 1000 --test-samples 100"));
  const nlohmann::json topk = nlohmann::json::parse(read_file(only_ps + "/summary.json"));
  EXPECT_EQ(topk["arch"], "ps");
  EXPECT_EQ(topk["arch_choice"]["predictions"].size(), 1u);
}

// Ctrl-C of a peer-to-peer job: the stop is a vote carried by the ring (all-reduce) or a
// deadline passed from neighbour to neighbour (gossip), so every worker stops after the
// same iteration (none is left waiting for a peer), and rank 0 saves.
TEST_F(ClusterTest, AnInterruptedPeerToPeerTrainStopsEveryWorkerTogether) {
  for (const std::string arch : {"allreduce", "gossip"}) {
    const std::string name = arch + "-interrupted", out = dir_ + "/" + name;
    const int rc = interrupted_run(name,
                                   "train --arch " + arch +
                                       " --workers 3 --model lenet5 --epochs 20"
                                       " --train-samples 2000 --test-samples 100 --down 1gbit"
                                       " --latency 1ms",
                                   20);
    const std::string log = read_file(dir_ + "/" + name + ".log");
    EXPECT_EQ(rc, 130) << log;
    const nlohmann::json summary = nlohmann::json::parse(read_file(out + "/summary.json"));
    EXPECT_GT(summary["interrupted_at"].get<int>(), 20) << arch;
    EXPECT_GT(summary["test_accuracy"].get<double>(), 0.1) << arch;
    EXPECT_EQ(read_file(out + "/weights.bin").size(), 246824u) << arch;
    for (int r = 1; r < 3; ++r) {
      const std::string w = read_file(out + "/worker-" + std::to_string(r) + ".log");
      EXPECT_EQ(w.find("failed"), std::string::npos) << arch << ": " << w;
    }
    for (int pid : processes_mentioning(out)) ::kill(pid, SIGKILL);
  }
}

// A job's full-duplex plan is re-planned together: when both links step up, the workers
// report to the PS, which hands both the slowest one's proposal for one iteration; the
// weights stay those of a static sequential run.
TEST_F(ClusterTest, WorkersReplanTheJobsFullDuplexPlanTogether) {
  ASSERT_TRUE(step_up_and_reference(60, " --scheduler dynacomm-fd"));
  const std::string replanned = dir_ + "/replanned", reference = dir_ + "/reference";
  const nlohmann::json summary = nlohmann::json::parse(read_file(replanned + "/summary.json"));
  const std::string worker1 = read_file(replanned + "/worker-1.log");
  ASSERT_GE(summary["plan_changes"].size(), 1u) << read_file(replanned + "/worker-0.log");
  const auto& change = summary["plan_changes"][0];
  EXPECT_NE(change["why"].get<std::string>().find("the job's plan, proposed by rank"),
            std::string::npos)
      << change;
  EXPECT_NE(change["why"].get<std::string>().find("downlink"), std::string::npos) << change;
  // Worker 1 changed to the same plan (the segments after the iteration) at the same
  // iteration.
  const std::string from =
      "plan 2 (dynamic) from iteration " + std::to_string(change["iteration"].get<int>()) + ": ";
  const std::string worker0 = read_file(replanned + "/worker-0.log");
  const auto line0 = worker0.find(from), line1 = worker1.find(from);
  ASSERT_NE(line0, std::string::npos) << worker0;
  ASSERT_NE(line1, std::string::npos) << worker1;
  EXPECT_EQ(worker0.substr(line0, worker0.find(" (", line0) - line0),
            worker1.substr(line1, worker1.find(" (", line1) - line1));
  EXPECT_NE(read_file(replanned + "/ps.log").find("replan: the job runs rank"), std::string::npos);

  const std::string w = read_file(replanned + "/weights.bin");
  ASSERT_FALSE(w.empty());
  EXPECT_TRUE(w == read_file(reference + "/weights.bin")) << "re-planning changed the weights";
}

// The link gets 50x faster mid-run, at iteration 5, after the warm-up's 2: the worker sees it in
// its transfers, re-plans (logged in metrics.csv, summary.json and the trace), and learning is
// untouched: the weights equal a run with the sequential plan bit for bit.
TEST_F(ClusterTest, PlanFollowsALinkChangeAndTheWeightsStayTheSame) {
  ASSERT_TRUE(step_up_and_reference(30, " --scheduler dynacomm"));
  const std::string replanned = dir_ + "/replanned", reference = dir_ + "/reference";
  const nlohmann::json summary = nlohmann::json::parse(read_file(replanned + "/summary.json"));
  ASSERT_GE(summary["plan_changes"].size(), 1u) << read_file(replanned + "/worker-0.log");
  const auto& change = summary["plan_changes"][0];
  EXPECT_GE(change["iteration"].get<int>(), 6);  // after the step, measured
  EXPECT_NE(change["why"].get<std::string>().find("downlink"), std::string::npos) << change;
  EXPECT_GT(change["predicted_current_ms"].get<double>(),
            change["predicted_best_ms"].get<double>());
  EXPECT_GE(summary["plans"].size(), 2u);
  // metrics.csv: the new plan id from the change on, with the reason on that row.
  const std::string metrics = read_file(replanned + "/metrics.csv");
  EXPECT_NE(metrics.find("plan_change,predicted_gain_ms"), std::string::npos);
  EXPECT_NE(metrics.find("\"downlink "), std::string::npos) << metrics;
  const nlohmann::json trace = nlohmann::json::parse(read_file(replanned + "/trace.json"));
  int instants = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "i" && e["cat"] == "replan") ++instants;
  EXPECT_GE(instants, 1);

  EXPECT_EQ(nlohmann::json::parse(read_file(reference + "/summary.json"))["plan_changes"].size(),
            0u);
  const std::string w = read_file(replanned + "/weights.bin");
  ASSERT_FALSE(w.empty());
  EXPECT_TRUE(w == read_file(reference + "/weights.bin")) << "re-planning changed the weights";
}

// dynacomm bench --link-trace: the policies on one trace, each with its iteration times
// and plan changes; the chart with the trace beneath.
TEST_F(ClusterTest, BenchComparesReplanningPoliciesOnATrace) {
  {
    std::ofstream t(dir_ + "/trace.csv");
    t << "# faster after 3 s\ntime_s,down,up,latency\n0,50mbit,50mbit,1ms\n3,1gbit,1gbit,1ms\n";
  }
  const std::string out = dir_ + "/bench";
  ASSERT_TRUE(run_dynacomm("bench",
                           "bench --model lenet5 --iterations 8 --batch 32 --train-samples 2000"
                           " --test-samples 100 --latency 1ms --link-trace " +
                               dir_ + "/trace.csv --policies dynacomm,dynacomm-static,oracle"));
  const nlohmann::json rows = nlohmann::json::parse(read_file(out + "/bench.json"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["scheduler"], "dynacomm");
  EXPECT_EQ(rows[1]["scheduler"], "dynacomm-static");
  EXPECT_EQ(rows[2]["scheduler"], "oracle");
  for (const auto& r : rows) {
    EXPECT_EQ(r["iteration_ms"].size(), 8u) << r["scheduler"];
    EXPECT_TRUE(r["plan_changes"].is_array());
    EXPECT_GT(r["total_ms"].get<double>(), 0);
    EXPECT_EQ(r["after_changes"].size(), 1u);
  }
  EXPECT_EQ(rows[1]["plan_changes"].size(), 0u) << "static never re-plans";
  const std::string svg = read_file(out + "/trace.svg");
  for (const char* s : {">dynacomm<", ">oracle<", ">down<", "the link trace"})
    EXPECT_NE(svg.find(s), std::string::npos) << s;
  EXPECT_NE(read_file(out + "/bench.md").find("| oracle |"), std::string::npos);
}

// The device of worker 0 gets 10x slower mid-run (--device-slowdown-trace): its online
// compute estimate follows (the final estimates against the warm-up's profile). The bound
// leaves room for a warm-up slowed by other tests running beside it (seen: 2x).
TEST_F(ClusterTest, ComputeEstimateFollowsADeviceSlowdownTrace) {
  const std::string out = dir_ + "/slow";
  ASSERT_TRUE(train_with_slowdowns("slow", "0,1,all\n5,10,0\n", "--iterations 60 --down 20mbit"));
  const nlohmann::json summary = nlohmann::json::parse(read_file(out + "/summary.json"));
  auto compute_ms = [](const nlohmann::json& profile) {
    double total = 0;
    for (const auto& u : profile["units"])
      total += u["forward_ms"].get<double>() + u["backward_ms"].get<double>();
    return total;
  };
  const double before = compute_ms(summary["profile"]);
  const double after = compute_ms(summary["final_estimates"]["profile"]);
  ASSERT_GT(before, 0);
  EXPECT_GT(after / before, 3) << "warm-up " << before << " ms, final estimate " << after << " ms";
}

// BSP goes at the pace of the slowest worker: worker 1's device is 5x slower throughout,
// and worker 0 (which computes at its own speed) plans for worker 1's compute, which the
// PS reports with every iteration's parameters. Fails without the barrier's pace: worker
// 0's estimate is then its own compute.
TEST_F(ClusterTest, EveryWorkerPlansForTheSlowestWorkersCompute) {
  const std::string out = dir_ + "/pace";
  ASSERT_TRUE(train_with_slowdowns("pace", "0,5,1\n", "--workers 2 --iterations 30 --down 1gbit"));
  const nlohmann::json summary = nlohmann::json::parse(read_file(out + "/summary.json"));
  double estimate = 0;  // worker 0's final compute estimate
  for (const auto& u : summary["final_estimates"]["profile"]["units"])
    estimate += u["forward_ms"].get<double>() + u["backward_ms"].get<double>();
  // Each worker's own compute per traced iteration, from the run's timeline.
  std::map<std::pair<int, std::int64_t>, double> own;
  const nlohmann::json trace = nlohmann::json::parse(read_file(out + "/trace.json"));
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const std::string cat = e.value("cat", "");
    if (cat != "forward" && cat != "backward") continue;
    own[{e["pid"].get<int>(), e["args"]["iteration"].get<std::int64_t>()}] +=
        e["dur"].get<double>() / 1000;
  }
  std::vector<double> mine, slow;
  for (const auto& [key, ms] : own) (key.first == 0 ? mine : slow).push_back(ms);
  ASSERT_FALSE(mine.empty());
  ASSERT_FALSE(slow.empty());
  std::sort(mine.begin(), mine.end());
  std::sort(slow.begin(), slow.end());
  const double mine_ms = mine[mine.size() / 2], slow_ms = slow[slow.size() / 2];
  // The estimate follows the last iterations' pace, so a burst of other tests' load at the
  // end moves it: its upper bound is worker 1's slowest tenth, not its median.
  const double slow_p90_ms = slow[slow.size() * 9 / 10];
  // Bounds with room for other tests' load beside this one (it shifts both workers alike).
  const std::string figures = "worker 0 plans for " + std::to_string(estimate) + " ms, computes " +
                              std::to_string(mine_ms) + " ms; worker 1 computes " +
                              std::to_string(slow_ms) + " ms (90th percentile " +
                              std::to_string(slow_p90_ms) + " ms)";
  EXPECT_GT(slow_ms, 2.5 * mine_ms) << "the emulated slowdown did not take: " << figures;
  EXPECT_GT(estimate, 2.5 * mine_ms) << figures;
  EXPECT_LT(estimate, 2 * slow_p90_ms) << figures;
}

// Under BSP the slowest link sets everyone's pace: worker 0, on a fast link, reports the
// job's prediction from worker 1's, which its own link cannot show.
TEST_F(ClusterTest, TheJobIsPredictedFromTheSlowestWorkersLink) {
  const std::string out = dir_ + "/slowlink";
  ASSERT_TRUE(run_dynacomm("slowlink",
                           "train --model lenet5 --scheduler dynacomm --iterations 9 --batch 32"
                           " --train-samples 1000 --test-samples 100 --down 1gbit --latency 1ms"
                           " --link 1:4mbit,4mbit,1ms"));
  const nlohmann::json s = nlohmann::json::parse(read_file(out + "/summary.json"));
  const double measured = s["median_iteration_ms"], own = s["predicted_ms"],
               job = s["predicted_slowest_ms"];
  const std::string figures = "measured " + std::to_string(measured) + " ms, worker 0 predicts " +
                              std::to_string(own) + " ms for its link, the job " +
                              std::to_string(job) + " ms";
  // lenet5's 247 kB each way at 4 Mbit/s: about 1 s per iteration; at 1 Gbit/s a few ms.
  EXPECT_LT(own, 0.2 * measured) << figures;
  EXPECT_GT(job, 0.6 * measured) << figures;
  EXPECT_LT(job, 1.5 * measured) << figures;
  EXPECT_NE(read_file(dir_ + "/slowlink.log").find("the slowest worker's link or device"),
            std::string::npos);
  EXPECT_NE(read_file(out + "/metrics.csv").find("predicted_slowest_ms"), std::string::npos);
}

// A job runs one full-duplex plan on all its workers: the one the slowest worker made for
// itself. Worker 1's 4 Mbit/s link makes it plan differently from worker 0 (on 1 Gbit/s:
// 2 segments each way against worker 1's 4 when each planned alone); both must push and
// pull in worker 1's segments.
TEST_F(ClusterTest, WorkersOfAJobRunOneFullDuplexPlan) {
  const std::string out = dir_ + "/oneplan";
  ASSERT_TRUE(run_dynacomm("oneplan",
                           "train --model lenet5 --workers 2 --scheduler dynacomm-fd"
                           " --iterations 9 --batch 32 --train-samples 1000 --test-samples 100"
                           " --down 1gbit --latency 1ms --link 1:4mbit,4mbit,1ms"));
  EXPECT_NE(read_file(out + "/ps.log").find("strategy 0 runs rank 1's plan"), std::string::npos)
      << read_file(out + "/ps.log");
  const nlohmann::json trace = nlohmann::json::parse(read_file(out + "/trace.json"));
  std::map<std::pair<std::int64_t, int>, std::pair<int, int>>
      segments;  // (it, worker) -> pulls, pushes
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || !e.contains("args") || !e["args"].contains("iteration"))
      continue;
    const std::string cat = e.value("cat", "");
    if (cat != "pull" && cat != "push") continue;
    auto& n = segments[{e["args"]["iteration"].get<std::int64_t>(), e["pid"].get<int>()}];
    ++(cat == "pull" ? n.first : n.second);
  }
  int compared = 0;
  for (const auto& [key, n] : segments) {
    if (key.second != 0 || key.first < 3) continue;  // worker 0, after the warm-up of 3
    const auto other = segments.find({key.first, 1});
    ASSERT_NE(other, segments.end()) << "iteration " << key.first << " of worker 1 not traced";
    EXPECT_EQ(n, other->second) << "iteration " << key.first << ": the workers ran different plans";
    ++compared;
  }
  EXPECT_GE(compared, 3);
}

// A malformed trace is refused before anything starts, naming the line.
TEST_F(ClusterTest, MalformedTraceIsRefusedNamingTheLine) {
  {
    std::ofstream t(dir_ + "/bad.csv");
    t << "time_s,down,up,latency\n0,50mbit,50mbit,1ms\n3,fast,1gbit,1ms\n";
  }
  const std::string cmd = std::string(DYNACOMM_EXE) +
                          " train --model lenet5 --iterations 3 --link-trace " + dir_ +
                          "/bad.csv --out " + dir_ + "/run > " + dir_ + "/bad.log 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  EXPECT_NE(read_file(dir_ + "/bad.log").find("bad.csv:3:"), std::string::npos)
      << read_file(dir_ + "/bad.log");
}

// The README's recipe: the PS holds the job's settings; a worker needs only the PS's
// address and its rank, and runs the job as the PS says.
TEST_F(ClusterTest, WorkersNeedOnlyThePsAddressAndTheirRank) {
  ASSERT_TRUE(
      run_by_hand("--workers 2 --model lenet5 --scheduler dynacomm --iterations 5 "
                  "--warmup 2 --train-samples 1000 --test-samples 100 --timeout 30s",
                  {"--threads 1 --out " + dir_ + "/run", "--threads 1"}))
      << read_file(dir_ + "/ps.log") << read_file(dir_ + "/worker-0.log")
      << read_file(dir_ + "/worker-1.log");
  const nlohmann::json s = nlohmann::json::parse(read_file(dir_ + "/run/summary.json"));
  EXPECT_EQ(s["model"], "lenet5");
  EXPECT_EQ(s["scheduler"], "dynacomm");
  EXPECT_EQ(s["workers"], 2);
  EXPECT_EQ(s["iterations"], 5);
}

// A worker whose command line says otherwise than the PS is refused, naming the flag, and
// the worker that already joined hears it from the PS at once (not after its timeout).
TEST_F(ClusterTest, AWorkerGivenAnotherValueIsRefusedAndTheOthersHearAtOnce) {
  EXPECT_FALSE(
      run_by_hand("--workers 2 --model cnn --iterations 5 --warmup 2 "
                  "--train-samples 1000 --test-samples 100 --timeout 300s",
                  {"--threads 1", "--threads 1 --model lenet5"}));
  const std::string refused = "--model lenet5 conflicts with the job's --model cnn";
  const std::string w1 = read_file(dir_ + "/worker-1.log"), w0 = read_file(dir_ + "/worker-0.log");
  EXPECT_NE(w1.find(refused), std::string::npos) << w1;
  EXPECT_NE(w0.find("said: worker 1 failed: its settings differ: " + refused), std::string::npos)
      << w0;
  EXPECT_NE(read_file(dir_ + "/ps.log").find("worker 1 failed"), std::string::npos);
}

}  // namespace
}  // namespace dynacomm::cluster

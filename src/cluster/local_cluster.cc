#include "cluster/local_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "cluster/netns.h"

namespace dynacomm::cluster {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;  // the one piece of process state a signal may touch
void on_signal(int) { g_interrupted = g_interrupted + 1; }

std::string tail_of(const std::string& path, int lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (std::size_t i = all.size() > static_cast<std::size_t>(lines) ? all.size() - lines : 0;
       i < all.size(); ++i)
    out += "\n    " + all[i];
  return out;
}

}  // namespace

bool interrupt_requested() { return g_interrupted > 0; }

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

LocalCluster::LocalCluster(std::string exe, std::string run_dir,
                           std::chrono::milliseconds start_timeout)
    : exe_(std::move(exe)), run_dir_(std::move(run_dir)), start_timeout_(start_timeout) {}

LocalCluster::~LocalCluster() { stop_all(SIGKILL); }

pid_t LocalCluster::spawn(const std::vector<std::string>& argv, const std::string& log,
                          const std::string& netns, bool append) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t launcher = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot start a process: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: the terminal's Ctrl-C goes to the launcher only
    // It dies with the launcher, however the launcher ends (a SIGKILL included): nothing
    // is left training unsupervised. (The launcher spawns from its main thread, whose exit
    // is the process's.) If the launcher died before this line, go now.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != launcher) ::_exit(1);
    if (!log.empty()) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
        ::close(fd);
      }
    }
    if (!netns.empty()) {
      try {
        enter_namespace(netns);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        ::_exit(126);
      }
    }
    ::execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  return pid;
}

std::string LocalCluster::start_ps(std::vector<std::string> args, const std::string& netns,
                                   const std::string& listen) {
  std::vector<std::string> argv{
      exe_, "ps", "--listen", listen, "--endpoint-file", run_dir_ + "/ps.endpoint"};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = run_dir_ + "/ps.log";
  ::unlink(argv[5].c_str());
  children_.push_back({"the PS", log, spawn(argv, log, netns), false, argv, netns, Role::kPs});
  const std::string endpoint = wait_for_endpoint(children_.size() - 1);
  children_.back().argv[3] = endpoint;  // started again: at the same address
  return endpoint;
}

std::string LocalCluster::wait_for_endpoint(std::size_t index) {
  Child& ps = children_[index];
  const std::string endpoint_file = ps.argv[5];
  const auto deadline = std::chrono::steady_clock::now() + start_timeout_;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(endpoint_file);
    std::string endpoint;
    if (in >> endpoint && endpoint.rfind("tcp://", 0) == 0) return endpoint;
    int status;
    if (::waitpid(ps.pid, &status, WNOHANG) == ps.pid) {
      ps.done = true;
      throw Error("the PS exited before it was ready; its log (" + ps.log +
                  "):" + tail_of(ps.log, 5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw Timeout("the PS did not report its endpoint within " +
                std::to_string(start_timeout_.count()) + " ms; see " + ps.log);
}

void LocalCluster::start_worker(int rank, std::vector<std::string> args, bool show_output,
                                const std::string& netns) {
  std::vector<std::string> argv{exe_, "worker", "--rank", std::to_string(rank)};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = run_dir_ + "/worker-" + std::to_string(rank) + ".log";
  children_.push_back({"worker " + std::to_string(rank), show_output ? "" : log,
                       spawn(argv, show_output ? "" : log, netns), false, argv, netns,
                       Role::kWorker});
}

void LocalCluster::set_graceful_interrupt(std::chrono::milliseconds grace) { graceful_ = grace; }

bool LocalCluster::interrupted() const { return stopping_; }

void LocalCluster::set_max_restarts(int n, std::function<void(const std::string&)> on_restart) {
  max_restarts_ = std::max(0, n);
  on_restart_ = std::move(on_restart);
}

void LocalCluster::set_ps_restart(std::function<std::optional<std::string>()> resume_from) {
  ps_resume_from_ = std::move(resume_from);
}

bool LocalCluster::restart_ps(Child& ps, const std::string& why) {
  if (restarts_ >= max_restarts_ || g_interrupted || stopping_ || !ps_resume_from_) return false;
  const std::optional<std::string> from = ps_resume_from_();
  if (!from) return false;
  ++restarts_;
  // The workers wait on a PS that has gone, with state it no longer has: they go too.
  for (Child& c : children_)
    if (c.role == Role::kWorker && !c.done) {
      ::kill(c.pid, SIGKILL);
      ::waitpid(c.pid, nullptr, 0);
      c.done = true;
    }
  if (std::find(ps.argv.begin(), ps.argv.end(), "--resume") == ps.argv.end())
    ps.argv.push_back("--resume");
  ::unlink(ps.argv[5].c_str());
  ps.pid = spawn(ps.argv, ps.log, ps.netns, /*append=*/true);
  ps.done = false;
  wait_for_endpoint(static_cast<std::size_t>(&ps - children_.data()));
  for (Child& c : children_)
    if (c.role == Role::kWorker) {
      c.pid = spawn(c.argv, c.log, c.netns, /*append=*/true);
      c.done = false;
    }
  if (on_restart_)
    on_restart_(why + "; started it again " + *from + ", and every worker with it (restart " +
                std::to_string(restarts_) + " of " + std::to_string(max_restarts_) +
                "); they rejoin there");
  return true;
}

bool LocalCluster::restart(Child& c, const std::string& why) {
  if (c.role == Role::kPs) return restart_ps(c, why);
  if (c.role != Role::kWorker || restarts_ >= max_restarts_ || g_interrupted || stopping_)
    return false;
  for (const Child& other : children_)  // the PS has finished the job: nothing to rejoin
    if (other.role == Role::kPs && other.done) return false;
  ++restarts_;
  c.pid = spawn(c.argv, c.log, c.netns, /*append=*/true);
  c.done = false;
  if (on_restart_)
    on_restart_(why + "; started it again (restart " + std::to_string(restarts_) + " of " +
                std::to_string(max_restarts_) + "), it rejoins the job");
  return true;
}

void LocalCluster::start_process(const std::string& name, std::vector<std::string> argv,
                                 const std::string& log_name, const std::string& netns) {
  const std::string log = run_dir_ + "/" + log_name;
  children_.push_back({name, log, spawn(argv, log, netns), false, argv, netns, Role::kOther});
}

void LocalCluster::stop_gracefully(const std::string& why, std::chrono::milliseconds grace) {
  if (stopping_) return;
  stopping_ = true;
  stop_by_ = std::chrono::steady_clock::now() + grace;
  for (auto& c : children_)
    if (!c.done && c.role == Role::kWorker) ::kill(c.pid, SIGTERM);  // they save
  if (on_restart_) on_restart_(why);
}

void LocalCluster::stop_all(int signal) {
  for (auto& c : children_)
    if (!c.done) ::kill(c.pid, signal);
  if (signal == SIGKILL)
    for (auto& c : children_)
      if (!c.done) {
        ::waitpid(c.pid, nullptr, 0);
        c.done = true;
      }
}

void LocalCluster::wait(const std::function<void()>& tick, std::chrono::milliseconds period) {
  std::size_t running = 0;
  for (const auto& c : children_) running += c.done ? 0 : 1;
  auto next_tick = std::chrono::steady_clock::now();
  while (running > 0) {
    if (tick && std::chrono::steady_clock::now() >= next_tick) {
      tick();
      next_tick = std::chrono::steady_clock::now() + period;
    }
    if (g_interrupted && graceful_.count() > 0 && !stopping_) {  // the first Ctrl-C
      stopping_ = true;
      stop_by_ = std::chrono::steady_clock::now() + graceful_;
      for (auto& c : children_)
        if (!c.done && c.role == Role::kWorker) ::kill(c.pid, SIGTERM);  // they save
      if (on_restart_)
        on_restart_(
            "interrupted: the workers stop at their next iteration and save what they "
            "have learned (Ctrl-C again stops at once)");
    }
    if (g_interrupted &&
        (!stopping_ || g_interrupted > 1 || std::chrono::steady_clock::now() > stop_by_)) {
      stop_all(SIGTERM);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      stop_all(SIGKILL);
      throw Error("interrupted: stopped the PS and all workers");
    }
    if (stopping_ && !g_interrupted && std::chrono::steady_clock::now() > stop_by_) {
      stop_all(SIGTERM);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      stop_all(SIGKILL);
      throw Timeout(
          "the workers did not stop in the time they were given after being asked "
          "to; stopped the PS and all workers");
    }
    // Each child by its pid, never "any child": another thread of this process runs tools
    // (tc, for --link-trace under netns) whose exit status a wait for any child would steal.
    bool reaped = false;
    for (auto& c : children_) {
      int status = 0;
      if (c.done || ::waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
      reaped = true;
      c.done = true;
      --running;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      std::ostringstream why;
      why << c.name << " failed ("
          << (WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                : "killed by signal " + std::to_string(WTERMSIG(status)))
          << ")";
      if (restart(c, why.str())) {
        running = 0;  // a restart of the PS starts the workers again too
        for (const auto& other : children_) running += other.done ? 0 : 1;
        break;
      }
      if (!c.log.empty()) why << "; last lines of " << c.log << ":" << tail_of(c.log, 5);
      stop_all(SIGTERM);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      stop_all(SIGKILL);
      throw Error(why.str() + "\nstopped the other processes");
    }
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace dynacomm::cluster

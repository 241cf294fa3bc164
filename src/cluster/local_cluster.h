// Starting a PS and N workers as separate processes on this machine, watching them, and
// stopping them all cleanly when one fails or on Ctrl-C.
//
//   LocalCluster c(exe, run_dir);
//   std::string ep = c.start_ps({"--workers", "2", ...});    // waits for its endpoint
//   c.start_worker(0, {"--ps", ep, ...}, /*show_output=*/true);
//   c.start_worker(1, {...}, false);                         // output to run_dir/worker-1.log
//   c.wait();   // throws Error naming the process that failed and why
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dynacomm::cluster {

class LocalCluster {
 public:
  LocalCluster(std::string exe, std::string run_dir, std::chrono::milliseconds start_timeout);
  ~LocalCluster();  // kills whatever still runs

  // Starts `exe ps ARGS --listen LISTEN --endpoint-file F` (in network namespace `netns`
  // when given) and returns the endpoint it bound (a free port chosen by the OS).
  std::string start_ps(std::vector<std::string> args, const std::string& netns = "",
                       const std::string& listen = "tcp://127.0.0.1:0");
  void start_worker(int rank, std::vector<std::string> args, bool show_output,
                    const std::string& netns = "");
  // Starts any program (argv[0] is its path) as a child watched like the others, with
  // output to run_dir/<log_name>.
  void start_process(const std::string& name, std::vector<std::string> argv,
                     const std::string& log_name, const std::string& netns = "");
  // Waits for every child, calling `tick` about every `period` meanwhile (a progress
  // display). The first to fail stops the rest; throws Error with its name, exit status
  // and the last lines of its log.
  void wait(const std::function<void()>& tick = {},
            std::chrono::milliseconds period = std::chrono::milliseconds(500));
  void stop_all(int signal);
  // A worker that fails is started again, with the same arguments, up to `n` times in
  // all (torchrun's --max-restarts); it rejoins the running job (ps/server.h). Each restart
  // is said through `on_restart`. Past n, a failure stops the job as before.
  void set_max_restarts(int n, std::function<void(const std::string&)> on_restart);
  // A PS that fails is started again too (one restart of the n), at the endpoint it had,
  // with `--resume` appended, when `resume_from()` says how ("from its checkpoint of
  // iteration 40"; nullopt: it has no checkpoint, and its failure stops the job). Every
  // worker is started again with it (their PS's state after the checkpoint is gone) and
  // joins the resumed job at the checkpoint's iteration.
  void set_ps_restart(std::function<std::optional<std::string>()> resume_from);
  int restarts() const { return restarts_; }
  // On Ctrl-C (SIGINT/SIGTERM to the launcher): the workers are sent SIGTERM, stop at their
  // next iteration and save (worker/worker.h), and wait() returns once all have exited,
  // with interrupted() true; after `grace`, or a second Ctrl-C, everything is killed.
  // Without it (0): killed at once.
  void set_graceful_interrupt(std::chrono::milliseconds grace);
  bool interrupted() const;
  // The same stop without a Ctrl-C (a target reached; from wait()'s tick): the workers stop
  // at their next iteration and save, `why` is said through on_restart, and wait() returns
  // once all have exited; still running after `grace`, everything is killed and wait()
  // throws. Again: no effect.
  void stop_gracefully(const std::string& why, std::chrono::milliseconds grace);

 private:
  enum class Role { kPs, kWorker, kOther };
  struct Child {
    std::string name, log;
    pid_t pid;
    bool done = false;
    std::vector<std::string> argv;  // to start it again
    std::string netns;
    Role role = Role::kOther;
  };
  pid_t spawn(const std::vector<std::string>& argv, const std::string& log,
              const std::string& netns, bool append = false);
  // After child c failed with `why`: started again (true), or no restarts are left.
  bool restart(Child& c, const std::string& why);
  // The same for the PS: it and every worker started again (true), or not.
  bool restart_ps(Child& ps, const std::string& why);
  // The endpoint the PS (just started as children_[index]) wrote; Error if it exits first.
  std::string wait_for_endpoint(std::size_t index);
  std::function<std::optional<std::string>()> ps_resume_from_;
  std::string exe_, run_dir_;
  std::chrono::milliseconds start_timeout_;
  std::vector<Child> children_;
  int max_restarts_ = 0, restarts_ = 0;
  std::chrono::milliseconds graceful_{0};
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_by_{};
  std::function<void(const std::string&)> on_restart_;
};

// Set by the SIGINT/SIGTERM handler the launcher installs; wait() stops the children.
void install_interrupt_handler();
// Whether that handler has seen a signal.
bool interrupt_requested();

}  // namespace dynacomm::cluster

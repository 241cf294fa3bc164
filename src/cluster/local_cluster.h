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

 private:
  struct Child {
    std::string name, log;
    pid_t pid;
    bool done = false;
  };
  pid_t spawn(const std::vector<std::string>& argv, const std::string& log,
              const std::string& netns);
  std::string exe_, run_dir_;
  std::chrono::milliseconds start_timeout_;
  std::vector<Child> children_;
};

// Set by the SIGINT/SIGTERM handler the launcher installs; wait() stops the children.
void install_interrupt_handler();

}  // namespace dynacomm::cluster

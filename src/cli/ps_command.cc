// `dynacomm ps`: the parameter server, one process. No libtorch: it stores flat float
// buffers per unit and runs SGD on them, so it starts in milliseconds.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/job_flags.h"
#include "report/chrome_trace.h"

namespace dynacomm::cli {

void add_ps_command(CLI::App& app) {
  struct Flags {
    JobFlags job;
    std::string listen = "tcp://127.0.0.1:7070";
    std::string endpoint_file;
    std::string trace;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("ps", "Run the parameter server");
  cmd->add_option("--listen", f->listen,
                  "ZeroMQ endpoint to bind; port 0 picks a free one. Loopback by default: binding "
                  "another address is an explicit choice")
      ->check(endpoint_check())
      ->capture_default_str();
  cmd->add_option("--endpoint-file", f->endpoint_file, "Write the bound endpoint to this file");
  cmd->add_option("--trace", f->trace,
                  "Write the PS's Chrome-trace events (the iterations the workers trace) here");
  f->job.add_job_flags(cmd);
  f->job.add_timeout(cmd);
  cmd->callback([f]() {
    ps::ServerOptions options = f->job.server_options();
    options.listen = f->listen;
    ps::PsServer server(options);
    if (!f->endpoint_file.empty()) {
      const std::string tmp = f->endpoint_file + ".tmp";
      std::ofstream(tmp) << server.endpoint() << "\n";
      std::rename(tmp.c_str(), f->endpoint_file.c_str());
    }
    std::cerr << "dynacomm ps: listening on " << server.endpoint() << " for " << f->job.workers
              << " worker(s), model " << f->job.model << "\n";
    server.start();
    std::vector<float> weights = server.wait();
    std::cerr << "dynacomm ps: done; received " << server.bytes_received() << " bytes, sent "
              << server.bytes_sent() << " bytes, dropped " << server.messages_dropped()
              << " malformed message(s)\n";
    if (!f->trace.empty()) {
      report::ChromeTrace trace;
      const int pid = f->job.workers;  // after the workers' processes
      trace.name_process(pid, "PS");
      trace.set_ps_clock();
      for (int r = 0; r < f->job.workers; ++r)
        trace.name_track(pid, r, "requests of worker " + std::to_string(r));
      trace.name_track(pid, f->job.workers, "updates (aggregate + SGD)");
      for (const ps::PsEvent& e : server.trace_events())
        trace.add_event(pid, e.track, e.name, e.category, e.start_ms, e.end_ms);
      trace.write(f->trace);
    }
  });
}

}  // namespace dynacomm::cli

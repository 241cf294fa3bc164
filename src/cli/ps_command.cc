// `dynacomm ps`: the parameter server, one process. No libtorch: it stores flat float
// buffers per unit and runs SGD on them, so it starts in milliseconds.
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/job_flags.h"
#include "net/curve.h"
#include "plan/model/quantity.h"
#include "report/chrome_trace.h"

namespace dynacomm::cli {

namespace {

// "1GiB", "512MiB", "65536": bytes; InvalidInput naming the flag.
std::int64_t parse_bytes(const std::string& text, const std::string& flag) {
  std::size_t end = 0;
  double v = 0;
  try {
    v = std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  const std::string unit = text.substr(end);
  const double scale = unit.empty() || unit == "B" ? 1
                       : unit == "KiB"             ? 1024.0
                       : unit == "MiB"             ? 1024.0 * 1024
                       : unit == "GiB"             ? 1024.0 * 1024 * 1024
                                                   : -1;
  if (end == 0 || scale < 0 || !(v > 0) || v * scale > 1e15)
    throw InvalidInput(flag + " '" + text + "': want a size such as 1GiB, 512MiB or 65536");
  return static_cast<std::int64_t>(v * scale);
}

}  // namespace

void add_ps_command(CLI::App& app) {
  struct Flags {
    JobFlags job;
    std::string listen = "tcp://127.0.0.1:7070";
    std::string endpoint_file;
    std::string trace;
    std::string peer_timeout = "30s";
    Checkpointing checkpoints;
    std::string key, allow, max_message = "1GiB";
    bool insecure = false;
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
  cmd->add_option("--peer-timeout", f->peer_timeout,
                  "A worker not heard from for this long leaves the job, which goes on without "
                  "it (it may join again); longer than any one transfer on the slowest link")
      ->check(positive_duration_check())
      ->capture_default_str();
  f->checkpoints.add_flags(cmd, /*dir_flag=*/true);
  cmd->add_option("--key", f->key, "The PS's CURVE key pair (dynacomm keygen); with --allow");
  cmd->add_option("--allow", f->allow,
                  "Allow-list of workers: lines \"RANK PUBLIC-KEY\" (or RANK FILE.pub)");
  cmd->add_flag("--insecure", f->insecure,
                "Listen on a non-loopback address without CURVE (a network you trust)");
  cmd->add_option("--max-message", f->max_message,
                  "Largest message a peer may send (bytes; KiB, MiB, GiB); a larger one drops "
                  "its connection")
      ->capture_default_str();
  cmd->callback([f]() {
    if (f->job.arch != "ps")
      throw InvalidInput("--arch " + f->job.arch +
                         ": the workers need no PS (dynacomm worker --ring, or dynacomm train)");
    ps::ServerOptions options = f->job.server_options();
    options.listen = f->listen;
    options.peer_timeout = std::chrono::milliseconds(
        static_cast<std::int64_t>(plan::parse_duration_ms(f->peer_timeout)));
    f->checkpoints.apply(options);
    if (f->key.empty() != f->allow.empty())
      throw InvalidInput(
          "--key and --allow go together: CURVE needs the PS's key pair and "
          "the workers it admits");
    if (!f->key.empty())
      options.curve = net::CurveServer{net::read_keypair(f->key), net::AllowList::read(f->allow)};
    options.insecure = f->insecure;
    options.max_message_bytes = parse_bytes(f->max_message, "--max-message");
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
              << " malformed message(s)";
    if (f->job.sync != "bsp")
      std::cerr << "; --sync " << f->job.sync << ": " << server.late_pushes_dropped()
                << " late unit push(es) dropped";
    std::cerr << "\n";
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

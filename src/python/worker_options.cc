#include "python/worker_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>

#include "base/error.h"
#include "cli/job_flags.h"
#include "net/curve.h"
#include "worker/join.h"

namespace dynacomm::python {

worker::WorkerOptions worker_options(const WorkerFlags& flags) {
  if (flags.ps.empty()) throw InvalidInput("dynacomm.Worker: ps is required (tcp://HOST:PORT)");
  if (flags.threads < 1) throw InvalidInput("dynacomm.Worker: threads must be at least 1");
  if (flags.key.empty() != flags.ps_key.empty())
    throw InvalidInput("dynacomm.Worker: key and ps_key go together (CURVE)");
  cli::JobFlags job;
  job.net = "none";  // as `dynacomm worker`: the real link unless net="user" emulates one
  CLI::App app("dynacomm.Worker", "dynacomm.Worker");
  job.add_job_flags(&app);
  job.add_timeout(&app);
  job.add_worker_flags(&app);
  std::vector<std::string> reversed(flags.args.rbegin(), flags.args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw InvalidInput(std::string("dynacomm.Worker: ") + e.what());
  }
  (void)job.worker_options();  // its own settings, checked before the PS is asked
  std::optional<net::CurveClient> curve;
  if (!flags.key.empty())
    curve = net::CurveClient{net::read_keypair(flags.key), net::read_public_key(flags.ps_key)};
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(job.timeout_ms()));
  const net::JobConfig config =
      worker::ask_job_config(flags.ps, flags.rank, timeout, curve ? &*curve : nullptr);
  try {  // --model python:NAME among them: the PS must serve this module
    job.adopt(config, app, flags.ps);
  } catch (const InvalidInput& e) {  // the PS tells the other workers at once, as the binary's
    worker::tell_ps_failed(flags.ps, flags.rank, std::string("its settings differ: ") + e.what(),
                           curve ? &*curve : nullptr);
    throw;
  }
  if (flags.rank < 0 || flags.rank >= job.workers)
    throw InvalidInput("dynacomm.Worker: rank " + std::to_string(flags.rank) + ": the job at " +
                       flags.ps + " has " + std::to_string(job.workers) + " worker(s)");
  worker::WorkerOptions o = job.worker_options();
  o.ps = flags.ps;
  o.rank = flags.rank;
  o.threads = flags.threads;
  o.job_settings = job.job_settings();
  o.curve = curve;
  return o;
}

}  // namespace dynacomm::python

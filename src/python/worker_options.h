// dynacomm.Worker's settings: its keyword arguments as `dynacomm worker` flags, parsed and
// checked by the same code, then the job's settings from the PS adopted (a flag that says
// otherwise is refused, naming both), as the binary's worker does.
#pragma once

#include <string>
#include <vector>

#include "worker/worker.h"

namespace dynacomm::python {

struct WorkerFlags {
  std::string ps;  // the PS endpoint
  int rank = 0;
  int threads = 1;
  std::vector<std::string> args;  // "--down", "100mbit", ...: `dynacomm worker`'s flags
  std::string key, ps_key;        // CURVE: this worker's key pair file, the PS's public key
};

// Asks the PS (the caller releases the GIL). Throws InvalidInput naming a bad flag, Timeout
// naming the PS.
worker::WorkerOptions worker_options(const WorkerFlags& flags);

}  // namespace dynacomm::python

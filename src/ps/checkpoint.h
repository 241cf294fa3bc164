// The PS's checkpoints: everything a job needs to go on after the PS is killed. A
// checkpoint is taken when every unit is at the same version J (the moment the last unit's
// update of J - 1 is applied, before any push of J can complete a unit), so it holds the
// parameters and optimiser state of iteration J exactly; pushes of J already received
// are not in it, and the workers redo iteration J. Every worker's data position is J too:
// a worker's batches follow from (seed, rank, iteration) alone.
//
//   Checkpoint c{j, hello, settings, store.state()};
//   write_checkpoint("ckpt", c, /*keep=*/3);          // ckpt/ckpt-000000000120.bin
//   Checkpoint back = load_latest("ckpt", check, log); // the newest that reads and fits
//
// File: "DYNCKPT1", u64 length of a JSON head {iteration, hello, settings, units: [{floats,
// version, started, public}]}, the head, each unit's parameters, momentum and (when
// `public`: a job with compressed pulls) public copy (float32, little-endian), and a CRC-32
// of everything before it. Written atomically: to a
// temporary file, fsync, rename, fsync of the folder; the newest `keep` are kept.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "net/job_protocol.h"
#include "ps/store.h"

namespace dynacomm::ps {

struct Checkpoint {
  std::int64_t iteration = 0;  // every unit is at this version
  net::Hello job;              // what the job runs: model, workers, unit layout, iterations
  net::JobConfig settings;     // the PS's job-wide settings
  std::vector<ParameterStore::UnitState> units;
  // Every unit's parameters back to back: the model's, in its order (the units are the
  // job's atoms, slices of the model's units in the same order).
  std::vector<float> flat_params() const;
};

// Makes dir (and the folders above it) when missing; InvalidInput naming it when it cannot
// be made or is not a folder.
void make_checkpoint_dir(const std::string& dir);
// Returns the file written. Error naming the path when the disk refuses.
std::string write_checkpoint(const std::string& dir, const Checkpoint& c, int keep);
// InvalidInput naming the path and what is wrong (truncated, checksum, layout).
Checkpoint read_checkpoint(const std::string& path);
// The checkpoint files in dir, newest first.
std::vector<std::string> checkpoint_files(const std::string& dir);
// The newest checkpoint in dir that reads and that `check` accepts (check returns why
// not, "" to accept); each one refused is logged with why. InvalidInput when none is
// usable, listing every refusal.
Checkpoint load_latest(const std::string& dir,
                       const std::function<std::string(const Checkpoint&)>& check,
                       const std::function<void(const std::string&)>& log);

}  // namespace dynacomm::ps

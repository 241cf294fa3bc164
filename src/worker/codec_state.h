// What a worker keeps of its compression across a stop: the codec's state (error feedback's
// residuals, DGC's momentum and accumulation) in its run folder, written when it stops
// (interrupted, or at the job's end), read back when it joins the job again at exactly the
// iteration it stopped before. A resumed job then goes on as if never stopped, bit for bit
// (ClusterTest.AnInterruptedCompressedTrainResumesBitForBit); anything else (another
// iteration, another codec, a damaged file) is said and left out: the residuals start at
// zero, as they would without the file.
//
//   File: "DCST" (4 bytes), version 1 (uint32), next iteration (int64), the spec's
//   length (uint32) and text, the state's length (uint64) and bytes.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace dynacomm::worker {

class Comm;

// out_dir/codec-state-worker<rank>.bin
std::string codec_state_path(const std::string& out_dir, int rank);

// Writes the state for taking up again at `next_iteration` (atomically: a temporary
// file renamed into place).
void save_codec_state(const std::string& path, const std::string& spec,
                      std::int64_t next_iteration, const std::string& state);

struct SavedCodecState {
  std::string spec, state;
  std::int64_t next_iteration = -1;
};
// The file as saved; InvalidInput naming what is wrong (missing, truncated, not one).
SavedCodecState load_codec_state(const std::string& path);

// At a (re)join at `first`: the saved state put into `comm` when it is for this spec and
// this iteration; one line to `progress` either way when a file is there (path "": none).
void restore_codec_state(const std::string& path, const std::string& spec, std::int64_t first,
                         int rank, Comm& comm, std::ostream& progress);

}  // namespace dynacomm::worker

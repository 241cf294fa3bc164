// What a worker keeps of its compression across a stop: the codec's state (error feedback's
// residuals, DGC's momentum and accumulation) in its run folder, written when it stops
// (interrupted, or at the job's end), read back when it joins the job again at exactly the
// iteration it stopped before. Two states are kept: before the iteration it stopped at and
// before the last one it ran, since the PS may stop the job a round earlier (the other
// workers stopped before making it: ps/server.cc). A resumed job then goes on as if never
// stopped, bit for bit (ClusterTest.AnInterruptedCompressedTrainResumesBitForBit); anything
// else (another iteration, another codec, a damaged file) is said and left out: the
// residuals start at zero, as they would without the file.
//
//   File: "DCST" (4 bytes), version 2 (uint32), the spec's length (uint32) and text, the
//   count of states (uint32), each: its next iteration (int64), its length (uint64) and
//   bytes. (Version 1: next iteration (int64), spec, one state.)
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace dynacomm::worker {

// out_dir/codec-state-worker<rank>.bin
std::string codec_state_path(const std::string& out_dir, int rank);

struct SavedCodecState {
  std::string spec;
  struct At {
    std::int64_t next_iteration = -1;  // the iteration it is for
    std::string state;
  };
  std::vector<At> states;
};

// Writes the states for taking up again (atomically: a temporary file renamed into place).
void save_codec_state(const std::string& path, const SavedCodecState& saved);
// The file as saved; InvalidInput naming what is wrong (missing, truncated, not one).
SavedCodecState load_codec_state(const std::string& path);

// At a (re)join at `first`: the saved state when it is for this spec and this iteration
// (nullopt: none); one line to `progress` either way when a file is there (path "": none).
std::optional<std::string> codec_state_for(const std::string& path, const std::string& spec,
                                           std::int64_t first, int rank, std::ostream& progress);

}  // namespace dynacomm::worker

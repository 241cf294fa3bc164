// The codecs' random draws: a stream determined by (seed, atom, iteration) alone, the same
// on every machine (SplitMix64, Steele et al. 2014), so a PS can draw what a worker drew.
//
//   Draws d(seed, slot);
//   d.uniform();        // in [0, 1)
//   d.below(n);         // in [0, n)
#pragma once

#include <cstdint>

#include "compress/compressor.h"

namespace dynacomm::compress {

class Draws {
 public:
  Draws(std::uint64_t seed, Slot slot) {
    state_ = seed;
    state_ = next() ^ static_cast<std::uint64_t>(slot.atom) * 0x9E3779B97F4A7C15ull;
    state_ = next() ^ static_cast<std::uint64_t>(slot.iteration) * 0xD1B54A32D192ED03ull;
  }
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // 24 random bits as a float in [0, 1): exact, and the same everywhere.
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
  std::uint64_t below(std::uint64_t n) {  // Lemire's multiply-shift; bias < n / 2^64
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  std::uint64_t state_;
};

}  // namespace dynacomm::compress

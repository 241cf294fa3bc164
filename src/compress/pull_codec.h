// The codec of a job's pulls (--compress-pulls METHOD). Pulls are float32 by default. With a
// method, the PS keeps a public copy of every atom (what every worker holds) besides the
// true parameters, and on each new version v sends the same encoded update
// delta = params - public, encoded with the method (no ,ef wrapper: what an encoding leaves
// out stays in params - public, the PS's own error feedback). Both sides add decode(delta)
// to their copy through apply() below, the same float operations in the same order, so
// every worker's copy equals the PS's public copy bit for bit. A worker that holds no copy
// of version v - 1 (its first pull, a rejoin) gets the public copy itself.
//
// Reply format: each atom starts with a kind byte, kCopy (then the float32 values) or
// kDelta (then the method's encoding of the update from v - 1 to v); a reply's atoms lie
// back to back, so the wire walks them like a mixed push (net/wire.h, WireLimits::pull_bytes).
//
//   PullCodec c("topk:0.01", seed);
//   std::string enc(c.delta_bytes(n, v), '\0');
//   c.encode_delta({atom, v}, delta, n, bytes(enc));
//   c.apply({atom, v}, bytes(enc), enc.size(), n, copy, &kind);  // copy += decoded delta
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compress/compressor.h"

namespace dynacomm::compress {

class PullCodec {
 public:
  enum Kind : std::uint8_t { kCopy = 0, kDelta = 1 };

  // "none": float32 pulls without kind bytes (dense()). Any other method of
  // make_compressor, without error feedback: InvalidInput for ",ef" (the PS's public copy is
  // its error feedback), auto, or dgc (its momentum belongs to gradients).
  explicit PullCodec(const std::string& spec, std::uint64_t seed = 1);

  bool dense() const { return method_ == nullptr; }
  std::string name() const;  // "none", or the method's canonical spec
  // Bytes of one atom of `floats` values in a reply, with its kind byte.
  std::size_t copy_bytes(std::int64_t floats) const;
  std::size_t delta_bytes(std::int64_t floats, std::int64_t version) const;
  // The wire's table of a reply's atoms (net::WireLimits::pull_bytes): per kind, each
  // atom's bytes; empty for dense pulls.
  std::vector<std::vector<std::int64_t>> reply_table(
      const std::vector<std::int64_t>& atom_floats) const;
  // Writes delta_bytes(floats, slot.iteration) bytes at out: kDelta, then the encoding.
  void encode_delta(Slot slot, const float* delta, std::int64_t floats, std::uint8_t* out);
  // One atom of an untrusted reply at `in` (at most `available` bytes) onto `copy`: kCopy
  // overwrites it, kDelta adds the decoded update. Returns the bytes it took; the kind in
  // `kind`. InvalidInput naming what is wrong (nothing written then). One thread at a time:
  // it decodes into the codec's own scratch.
  std::size_t apply(Slot slot, const std::uint8_t* in, std::size_t available,
                    std::int64_t floats, float* copy, Kind* kind) const;

 private:
  std::unique_ptr<Compressor> method_;
  mutable std::vector<float> scratch_;
};

}  // namespace dynacomm::compress

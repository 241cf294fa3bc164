// The PS's side of compressed pulls (compress/pull_codec.h): per atom, the public copy every
// worker holds, the encoded update of its newest version, and per rank the version of the
// public copy that rank was last sent. No libtorch, no networking; the I/O thread owns it.
//
//   PullEncoder e(PullCodec("topk:0.01", seed), workers, initial_atoms, /*version=*/0);
//   e.advance(atom, v, params_at_v);          // after the update to v: encode, public += it
//   std::size_t n = e.reply_bytes(rank, atom, v);
//   e.write(rank, atom, v, out);              // the update when rank holds v - 1, else a copy
//
// A rank is sent the update of v only when the PS last sent it that atom at v - 1 and the
// update was made from v - 1; anything else (its first pull, a rejoin, a version the
// encoder skipped) gets the public copy in float32. Under BSP a pull for v comes while the
// atom is at v (no rank passes v before every rank pushed v), so one update per atom is
// enough. After a PS restart the public copy starts again at the parameters (what was left
// out is not lost: it is in them), and every worker gets a copy first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compress/pull_codec.h"

namespace dynacomm::ps {

class PullEncoder {
 public:
  // `atoms`: every atom's parameters at `version` (the public copy starts as them).
  PullEncoder(compress::PullCodec codec, int workers, std::vector<std::vector<float>> atoms,
              std::int64_t version);

  int num_atoms() const { return static_cast<int>(atoms_.size()); }
  // The atom's version of the public copy.
  std::int64_t version(int atom) const;
  // The atom's parameters are at `version` now: unless the public copy is there already,
  // encodes the update params - public and adds its decoding to the public copy.
  void advance(int atom, std::int64_t version, const float* params);
  // The bytes of atom's part of a reply to `rank` at `version` (which must be the public
  // copy's: InvalidInput otherwise).
  std::size_t reply_bytes(int rank, int atom, std::int64_t version) const;
  // Writes them at out; the rank holds the public copy of `version` from now on.
  void write(int rank, int atom, std::int64_t version, std::uint8_t* out);
  // `rank` holds no public copy any more (it left, joined again, or was sent the true
  // parameters): its next pull of each atom is a copy.
  void forget(int rank);
  void forget(int rank, int atom);
  const std::vector<float>& public_copy(int atom) const;
  // Of the replies written: atoms sent as updates and as copies.
  std::int64_t deltas_sent() const { return deltas_; }
  std::int64_t copies_sent() const { return copies_; }

 private:
  struct Atom {
    std::vector<float> public_copy;
    std::int64_t version = 0;
    std::int64_t base = -1;  // the version the update in `update` starts from; -1: none
    std::string update;      // kind byte and encoding
    std::vector<std::int64_t> held;  // per rank: the version it was last sent; -1: none
  };
  const Atom& atom_at(int atom) const;
  bool sends_update(const Atom& a, int rank, std::int64_t version) const;
  compress::PullCodec codec_;
  std::vector<Atom> atoms_;
  std::vector<float> delta_;
  std::int64_t deltas_ = 0, copies_ = 0;
};

}  // namespace dynacomm::ps

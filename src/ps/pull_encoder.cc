#include "ps/pull_encoder.h"

#include <cstring>

#include "base/error.h"

namespace dynacomm::ps {

PullEncoder::PullEncoder(compress::PullCodec codec, int workers,
                         std::vector<std::vector<float>> atoms, std::int64_t version)
    : codec_(std::move(codec)) {
  if (codec_.dense()) throw InvalidInput("ps: dense pulls need no encoder");
  if (workers < 1 || version < 0) throw InvalidInput("ps: pull encoder of no workers");
  for (auto& values : atoms) {
    Atom a;
    a.public_copy = std::move(values);
    a.version = version;
    a.held.assign(static_cast<std::size_t>(workers), -1);
    atoms_.push_back(std::move(a));
  }
}

const PullEncoder::Atom& PullEncoder::atom_at(int atom) const {
  if (atom < 0 || atom >= num_atoms())
    throw InvalidInput("ps: atom " + std::to_string(atom) + " of a model of " +
                       std::to_string(num_atoms()));
  return atoms_[static_cast<std::size_t>(atom)];
}

std::int64_t PullEncoder::version(int atom) const { return atom_at(atom).version; }

const std::vector<float>& PullEncoder::public_copy(int atom) const {
  return atom_at(atom).public_copy;
}

void PullEncoder::advance(int atom, std::int64_t version, const float* params) {
  atom_at(atom);
  Atom& a = atoms_[static_cast<std::size_t>(atom)];
  if (version <= a.version) return;
  const std::int64_t n = static_cast<std::int64_t>(a.public_copy.size());
  delta_.resize(a.public_copy.size());
  for (std::int64_t i = 0; i < n; ++i) delta_[i] = params[i] - a.public_copy[i];
  const compress::Slot slot{atom, version};
  a.update.resize(codec_.delta_bytes(n, version));
  auto* bytes = reinterpret_cast<std::uint8_t*>(a.update.data());
  codec_.encode_delta(slot, delta_.data(), n, bytes);
  // The same call a worker makes on its copy: the copies stay equal bit for bit.
  codec_.apply(slot, bytes, a.update.size(), n, a.public_copy.data(), nullptr);
  a.base = a.version;
  a.version = version;
}

bool PullEncoder::sends_update(const Atom& a, int rank, std::int64_t version) const {
  return a.base >= 0 && a.base == version - 1 && a.held[static_cast<std::size_t>(rank)] == a.base;
}

std::size_t PullEncoder::reply_bytes(int rank, int atom, std::int64_t version) const {
  const Atom& a = atom_at(atom);
  if (rank < 0 || rank >= static_cast<int>(a.held.size()))
    throw InvalidInput("ps: pull reply for rank " + std::to_string(rank));
  if (version != a.version)
    throw InvalidInput("ps: pull of atom " + std::to_string(atom) + " at version " +
                       std::to_string(version) + ", its public copy is at " +
                       std::to_string(a.version));
  return sends_update(a, rank, version)
             ? a.update.size()
             : codec_.copy_bytes(static_cast<std::int64_t>(a.public_copy.size()));
}

void PullEncoder::write(int rank, int atom, std::int64_t version, std::uint8_t* out) {
  reply_bytes(rank, atom, version);  // checks
  Atom& a = atoms_[static_cast<std::size_t>(atom)];
  if (sends_update(a, rank, version)) {
    std::memcpy(out, a.update.data(), a.update.size());
    ++deltas_;
  } else {
    *out++ = compress::PullCodec::kCopy;
    if (!a.public_copy.empty())
      std::memcpy(out, a.public_copy.data(), a.public_copy.size() * sizeof(float));
    ++copies_;
  }
  a.held[static_cast<std::size_t>(rank)] = version;
}

void PullEncoder::forget(int rank) {
  for (int i = 0; i < num_atoms(); ++i) forget(rank, i);
}

void PullEncoder::forget(int rank, int atom) {
  atom_at(atom);
  Atom& a = atoms_[static_cast<std::size_t>(atom)];
  if (rank >= 0 && rank < static_cast<int>(a.held.size()))
    a.held[static_cast<std::size_t>(rank)] = -1;
}

}  // namespace dynacomm::ps

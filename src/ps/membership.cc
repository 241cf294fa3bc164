#include "ps/membership.h"

namespace dynacomm::ps {

std::string Membership::join(int rank, const std::string& peer) {
  if (rank < 0 || rank >= workers_)
    return "refused: rank " + std::to_string(rank) + " but the job has " +
           std::to_string(workers_) + " workers (ranks 0.." + std::to_string(workers_ - 1) + ")";
  auto it = peers_.find(rank);
  if (it != peers_.end() && it->second != peer)
    return "refused: rank " + std::to_string(rank) + " has already joined";
  peers_[rank] = peer;
  return "";
}

std::optional<int> Membership::rank_of(const std::string& peer) const {
  for (const auto& [rank, id] : peers_)
    if (id == peer) return rank;
  return std::nullopt;
}

bool Membership::is(int rank, const std::string& peer) const {
  auto it = peers_.find(rank);
  return it != peers_.end() && it->second == peer;
}

std::string Membership::who(const std::string& peer) const {
  const std::optional<int> rank = rank_of(peer);
  return rank ? "rank " + std::to_string(*rank) : "an unknown peer";
}

void Membership::leave(int rank) {
  if (peers_.count(rank)) left_.insert(rank);
}

std::string Membership::missing() const {
  std::string out;
  for (int r = 0; r < workers_; ++r)
    if (!peers_.count(r)) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

}  // namespace dynacomm::ps

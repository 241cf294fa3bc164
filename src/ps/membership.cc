#include "ps/membership.h"

namespace dynacomm::ps {

std::string Membership::join(int rank, const std::string& peer, Clock::time_point now) {
  if (rank < 0 || rank >= workers_)
    return "refused: rank " + std::to_string(rank) + " but the job has " +
           std::to_string(workers_) + " workers (ranks 0.." + std::to_string(workers_ - 1) + ")";
  if (left_.count(rank)) return "refused: rank " + std::to_string(rank) + " has finished the job";
  auto it = peers_.find(rank);
  if (it != peers_.end() && it->second != peer)
    return "refused: rank " + std::to_string(rank) + " has already joined";
  peers_[rank] = peer;
  seen_[rank] = now;
  dropped_.erase(rank);
  return "";
}

std::optional<int> Membership::rank_of(const std::string& peer) const {
  for (const auto& [rank, id] : peers_)
    if (id == peer) return rank;
  return std::nullopt;
}

std::optional<std::string> Membership::peer_of(int rank) const {
  auto it = peers_.find(rank);
  if (it == peers_.end()) return std::nullopt;
  return it->second;
}

bool Membership::is(int rank, const std::string& peer) const {
  auto it = peers_.find(rank);
  return it != peers_.end() && it->second == peer;
}

std::string Membership::who(const std::string& peer) const {
  const std::optional<int> rank = rank_of(peer);
  return rank ? "rank " + std::to_string(*rank) : "an unknown peer";
}

void Membership::seen(int rank, Clock::time_point now) {
  if (peers_.count(rank)) seen_[rank] = now;
}

std::vector<int> Membership::silent(Clock::time_point now,
                                    std::chrono::milliseconds timeout) const {
  std::vector<int> out;
  for (const auto& [rank, at] : seen_)
    if (!left_.count(rank) && now - at > timeout) out.push_back(rank);
  return out;
}

void Membership::leave(int rank) {
  if (peers_.count(rank)) left_.insert(rank);
}

void Membership::drop(int rank, Clock::time_point now) {
  if (peers_.erase(rank)) dropped_[rank] = now;
  seen_.erase(rank);
}

bool Membership::finished(Clock::time_point now, std::chrono::milliseconds grace) const {
  if (left_.empty()) return false;
  for (int r = 0; r < workers_; ++r) {
    if (left_.count(r)) continue;
    auto it = dropped_.find(r);
    if (it == dropped_.end() || now - it->second < grace) return false;
  }
  return true;
}

std::string Membership::missing() const {
  std::string out;
  for (int r = 0; r < workers_; ++r)
    if (!peers_.count(r)) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

}  // namespace dynacomm::ps

#include "worker/push_queue.h"

namespace dynacomm::worker {

std::optional<PushQueue::Push> PushQueue::next() {
  if (queued_.empty()) return std::nullopt;
  std::size_t pick = 0;
  if (queued_.front().credit_bytes > 0) {
    for (std::size_t i = 1; i < queued_.size(); ++i) {
      const Push &q = queued_[i], &p = queued_[pick];
      if (q.iteration < p.iteration || (q.iteration == p.iteration && q.first_atom < p.first_atom))
        pick = i;
    }
    const Push& p = queued_[pick];
    if (unacked_ > 0 && unacked_ + p.bytes > p.credit_bytes) return std::nullopt;
  }
  Push p = std::move(queued_[pick]);
  queued_.erase(queued_.begin() + static_cast<std::ptrdiff_t>(pick));
  unacked_ += p.bytes;
  return p;
}

}  // namespace dynacomm::worker

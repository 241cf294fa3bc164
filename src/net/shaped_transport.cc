#include "net/shaped_transport.h"

#include <algorithm>

namespace dynacomm::net {

namespace {
constexpr double kUnpaced = 1e15;  // bit/s: latency only, the kernel paces the link

Clock::duration ms(double x) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(x));
}

}  // namespace

ShapedTransport::ShapedTransport(Transport& inner, const LinkEmulation& link,
                                 const base::TimeSource& time)
    : inner_(inner),
      time_(time),
      link_(link),
      up_(link.up_bps > 0 ? link.up_bps : kUnpaced, link.latency_ms, 0),
      down_(link.down_bps > 0 ? link.down_bps : kUnpaced, link.latency_ms, 0) {}

void ShapedTransport::set_link(const LinkEmulation& link) {
  up_.set_rate(link.up_bps > 0 ? link.up_bps : kUnpaced);
  down_.set_rate(link.down_bps > 0 ? link.down_bps : kUnpaced);
  up_.set_latency(link.latency_ms);
  down_.set_latency(link.latency_ms);
  link_ = link;
}

std::int64_t ShapedTransport::overhead_bytes(const LinkShaper& s) const {
  return static_cast<std::int64_t>(link_.extra_overhead_ms * s.bandwidth_bps() / 8e3);
}

Clock::time_point ShapedTransport::send_timed(std::string&& frame) {
  const auto now = time_.now();
  Clock::time_point at = now;
  switch (frame_type(frame)) {
    case MessageType::kPush: {
      const auto bytes = static_cast<std::int64_t>(frame.size() - kHeaderBytes);
      at = up_.deliver_at(now, bytes + overhead_bytes(up_));
      if (cloud_) at = std::max(at, cloud_->into_ps(now, bytes) + ms(link_.latency_ms));
      break;
    }
    case MessageType::kPullRequest:
      at = now + ms(link_.latency_ms);
      break;
    default:
      inner_.send(std::move(frame));
      return now;
  }
  outgoing_.emplace(at, std::move(frame));  // after equal times: in order
  send_due(now);
  return at;
}

void ShapedTransport::send_due(Clock::time_point now) {
  while (!outgoing_.empty() && outgoing_.begin()->first <= now) {
    inner_.send(std::move(outgoing_.begin()->second));
    outgoing_.erase(outgoing_.begin());
  }
}

bool ShapedTransport::poll(Clock::time_point deadline, Message* out) {
  while (true) {
    const auto now = time_.now();
    send_due(now);
    if (!incoming_.empty() && incoming_.front().delivered <= now) {
      *out = std::move(incoming_.front());
      incoming_.pop_front();
      return true;
    }
    Clock::time_point until = deadline;  // past: the inner poll only takes what is there
    if (!outgoing_.empty()) until = std::min(until, outgoing_.begin()->first);
    if (!incoming_.empty()) until = std::min(until, incoming_.front().delivered);
    Message m;
    if (!inner_.poll(until, &m)) {
      const auto after = time_.now();
      if (after >= deadline || after < until) return false;  // the deadline, or woken
      continue;                                              // a held frame is due
    }
    const auto taken = time_.now();
    if (m.header.type == MessageType::kPushAck) {
      m.delivered = down_.deliver_at(taken, 0);
    } else if (m.header.type == MessageType::kPullReply) {
      const auto bytes = static_cast<std::int64_t>(m.header.payload_bytes);
      m.delivered = down_.deliver_at(taken, bytes + overhead_bytes(down_));
      if (cloud_)
        m.delivered = std::max(m.delivered, cloud_->out_of_ps(taken, bytes) + ms(link_.latency_ms));
    } else {
      *out = std::move(m);  // control: not delayed
      return true;
    }
    incoming_.push_back(std::move(m));
  }
}

}  // namespace dynacomm::net

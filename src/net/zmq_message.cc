#include "net/zmq_message.h"

#include <cerrno>

namespace dynacomm::net {

zmq::context_t& zmq_context() {
  static zmq::context_t context{1};
  return context;
}

zmq::message_t owned_message(std::string&& bytes) {
  auto* owner = new std::string(std::move(bytes));
  return zmq::message_t(
      owner->data(), owner->size(),
      [](void*, void* hint) { delete static_cast<std::string*>(hint); }, owner);
}

std::chrono::milliseconds poll_timeout(std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? std::chrono::milliseconds(0) : left;
}

void poll_until(zmq::pollitem_t* items, std::size_t n,
                std::chrono::steady_clock::time_point deadline) {
  try {
    zmq::poll(items, n, poll_timeout(deadline));
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw;
    for (std::size_t i = 0; i < n; ++i) items[i].revents = 0;
  }
}

}  // namespace dynacomm::net

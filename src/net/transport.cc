#include "net/transport.h"

#include "base/error.h"

namespace dynacomm::net {

Message Transport::receive(std::chrono::milliseconds timeout, const std::string& waiting_for) {
  const auto deadline = Clock::now() + timeout;
  Message m;
  while (!poll(deadline, &m))
    if (Clock::now() >= deadline)
      throw Timeout("no answer from the PS at " + endpoint() + " within " +
                    std::to_string(timeout.count()) + " ms while waiting for " + waiting_for);
  return m;
}

}  // namespace dynacomm::net

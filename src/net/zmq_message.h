// For the files that talk to ZeroMQ directly (net/connection.cc, net/zmq_router.cc): the
// process's one ZeroMQ context (inproc:// endpoints reach only sockets of the same
// context), and a message that takes over a frame's bytes, so ZeroMQ sends them without
// copying; it frees them once sent. Kept out of the transports' headers so that <zmq.hpp>
// stays out of wide includes.
#pragma once

#include <string>
#include <zmq.hpp>

namespace dynacomm::net {

// Lives until the process exits; its destructor waits for lingering messages to leave.
zmq::context_t& zmq_context();

zmq::message_t owned_message(std::string&& bytes);

// How long until `deadline`, for zmq::poll: rounded up (rounding down to 0 ms would spin),
// never negative.
std::chrono::milliseconds poll_timeout(std::chrono::steady_clock::time_point deadline);

// zmq::poll on `n` items until `deadline`. A signal that lands on the calling thread (the
// launcher's stop reaches whichever thread the kernel picks) interrupts it: that is no
// event, not an error, and every revents is left 0; any other failure throws as zmq::poll.
void poll_until(zmq::pollitem_t* items, std::size_t n,
                std::chrono::steady_clock::time_point deadline);

}  // namespace dynacomm::net

// For the two files that talk to ZeroMQ directly (net/connection.cc, ps/server.cc): a
// message that takes over a frame's bytes, so ZeroMQ sends them without copying; it frees
// them once sent. Kept out of connection.h so that <zmq.hpp> stays out of wide includes.
#pragma once

#include <string>
#include <zmq.hpp>

namespace dynacomm::net {

zmq::message_t owned_message(std::string&& bytes);

}  // namespace dynacomm::net

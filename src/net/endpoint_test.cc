#include "net/endpoint.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dynacomm::net {
namespace {

TEST(Endpoint, AcceptsWhatZeroMqBindsAsAsked) {
  for (const char* e : {"tcp://127.0.0.1:7070", "tcp://127.0.0.1:0", "tcp://*:65535",
                        "tcp://[::1]:80", "tcp://host.example:1", "inproc://ps", "ipc:///tmp/x"})
    EXPECT_NO_THROW(check_endpoint(e, "--listen")) << e;
}

TEST(Endpoint, RejectsPortsAndTransportsItWouldMisread) {
  for (const char* e : {"tcp://127.0.0.1:99999", "tcp://127.0.0.1:", "tcp://127.0.0.1",
                        "tcp://127.0.0.1:7x", "udp://127.0.0.1:7070", "127.0.0.1:7070", "inproc://",
                        "tcp://:7070", "tcp://127.0.0.1:-1"}) {
    try {
      check_endpoint(e, "--listen");
      ADD_FAILURE() << e << " accepted";
    } catch (const InvalidInput& x) {
      EXPECT_NE(std::string(x.what()).find("--listen '"), std::string::npos) << x.what();
    }
  }
}

}  // namespace
}  // namespace dynacomm::net

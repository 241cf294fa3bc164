// libFuzzer: the PS's handling of a whole sequence of messages from up to four peers (a
// job of two workers and strangers), through ps::PsHarness: no sockets, the real server
// code. Each record of the input is one message:
//   kind u8 (bit 0: raw bytes as they are; bits 1-2: which peer; the first record's bit 7:
//   a mixed-codec job) | length u16 | body
// A body that is not raw is a header's fields (type u16, sender i32, iteration i64,
// first u32, last u32, flags u16, compute_us u32) then the payload, encoded with valid
// checksums, so the fuzzer reaches past the decoder into the PS's logic. Nothing a peer
// sends may crash the PS (a sanitizer report or an uncaught exception fails the run).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "net/wire.h"
#include "ps/server.h"

namespace {

template <typename T>
T take(const std::uint8_t*& p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}

std::string frame_of(const std::uint8_t* body, std::size_t size, bool mixed) {
  using namespace dynacomm::net;
  constexpr std::size_t kFields = 2 + 4 + 8 + 4 + 4 + 2 + 4;
  if (size < kFields) return std::string(reinterpret_cast<const char*>(body), size);
  const std::uint8_t* p = body;
  Header h;
  h.type = static_cast<MessageType>(take<std::uint16_t>(p) % 14);
  h.sender = take<std::int32_t>(p) % 5;
  h.iteration = take<std::int64_t>(p) % 8;
  h.first_unit = take<std::uint32_t>(p) % 4;
  h.last_unit = take<std::uint32_t>(p) % 4;
  h.flags = take<std::uint16_t>(p) & 3;
  h.compute_us = take<std::uint32_t>(p);
  if (mixed && h.type == MessageType::kPush) h.codec = static_cast<Codec>(255);
  return encode(h, p, size - kFields);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dynacomm;
  ps::ServerOptions o;
  o.workers = 2;
  o.log = [](const std::string&) {};
  // The first record's kind, bit 7: a job whose pushes are mixed (--compress auto), each
  // atom prefixed by its method's index.
  const bool mixed = size > 0 && (data[0] & 0x80);
  if (mixed) o.compression = "auto:qsgd:4+topk:0.5";
  // Bit 6: a job with compressed pulls (the PS's public copy and its updates).
  if (size > 0 && (data[0] & 0x40)) o.pull_compression = "topk:0.5";
  ps::PsHarness ps(o);
  static const char* const kPeers[4] = {"peer-a", "peer-b", "peer-c", "peer-d"};
  while (size >= 3) {
    const std::uint8_t kind = data[0];
    std::size_t len = static_cast<std::size_t>(data[1] | (data[2] << 8));
    data += 3;
    size -= 3;
    if (len > size) len = size;
    const std::string frame = (kind & 1) ? std::string(reinterpret_cast<const char*>(data), len)
                                         : frame_of(data, len, mixed);
    data += len;
    size -= len;
    if (!ps.feed(kPeers[(kind >> 1) & 3], frame.data(), frame.size())) break;
  }
  return 0;
}

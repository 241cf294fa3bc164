#include "net/wire.h"

#include <zlib.h>

#include <cstring>
#include <string>

namespace dynacomm::net {

namespace {

template <typename T>
void put(std::string& out, std::size_t offset, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[offset + i] = static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
}

template <typename T>
T get(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return static_cast<T>(v);
}

bool carries_units(MessageType t) {
  return t == MessageType::kPullReply || t == MessageType::kPush ||
         t == MessageType::kPullRequest || t == MessageType::kPushAck;
}

// A mixed push's or a compressed pull reply's payload walked unit by unit: each starts
// with its method's (kind's) index into `table`, and the encodings fill the payload exactly
// ("" when they do).
std::string walk_error(const char* what, const Header& h, const std::uint8_t* payload,
                       const std::vector<std::vector<std::int64_t>>& table) {
  std::uint64_t at = 0;
  for (auto u = h.first_unit; u <= h.last_unit; ++u) {
    if (at >= h.payload_bytes)
      return std::string(what) + " of " + std::to_string(h.payload_bytes) +
             " bytes ends before unit " + std::to_string(u);
    const std::size_t k = payload[at];
    if (k >= table.size())
      return std::string(what) + ": unit " + std::to_string(u) + " names method " +
             std::to_string(k) + " of a job with " + std::to_string(table.size());
    at += static_cast<std::uint64_t>(table[k].at(u));
  }
  if (at != h.payload_bytes)
    return std::string(what) + " of " + std::to_string(h.payload_bytes) + " bytes for units " +
           std::to_string(h.first_unit) + ".." + std::to_string(h.last_unit) +
           ", their methods' encodings take " + std::to_string(at);
  return "";
}

}  // namespace

const char* to_string(MessageType t) {
  switch (t) {
    case MessageType::kHello:
      return "hello";
    case MessageType::kInit:
      return "init";
    case MessageType::kPullRequest:
      return "pull-request";
    case MessageType::kPullReply:
      return "pull-reply";
    case MessageType::kPush:
      return "push";
    case MessageType::kError:
      return "error";
    case MessageType::kShutdown:
      return "shutdown";
    case MessageType::kPlans:
      return "plans";
    case MessageType::kReplan:
      return "replan";
    case MessageType::kPushAck:
      return "push-ack";
    case MessageType::kJobConfig:
      return "job-config";
    case MessageType::kHeartbeat:
      return "heartbeat";
    case MessageType::kCheckpoint:
      return "checkpoint";
  }
  return "unknown";
}

MessageType frame_type(const std::string& frame) {
  if (frame.size() < kHeaderBytes) return MessageType::kError;
  return static_cast<MessageType>(
      get<std::uint16_t>(reinterpret_cast<const std::uint8_t*>(frame.data()) + 6));
}

std::uint32_t crc32(const void* data, std::size_t size) {
  uLong c = ::crc32(0L, Z_NULL, 0);
  const auto* p = static_cast<const Bytef*>(data);
  while (size > 0) {
    const uInt chunk = size > (1u << 30) ? (1u << 30) : static_cast<uInt>(size);
    c = ::crc32(c, p, chunk);
    p += chunk;
    size -= chunk;
  }
  return static_cast<std::uint32_t>(c);
}

std::string make_frame(std::size_t payload_size) {
  return std::string(kHeaderBytes + payload_size, '\0');
}

void seal_frame(std::string& out, Header h) {
  const std::size_t payload_size = out.size() - kHeaderBytes;
  h.payload_bytes = payload_size;
  h.payload_crc32 = payload_size ? crc32(out.data() + kHeaderBytes, payload_size) : 0;
  put<std::uint32_t>(out, 0, kMagic);
  put<std::uint16_t>(out, 4, kProtocolVersion);
  put<std::uint16_t>(out, 6, static_cast<std::uint16_t>(h.type));
  put<std::uint32_t>(out, 8, static_cast<std::uint32_t>(h.sender));
  put<std::uint16_t>(out, 12, static_cast<std::uint16_t>(h.codec));
  put<std::uint16_t>(out, 14, h.flags);
  put<std::uint64_t>(out, 16, static_cast<std::uint64_t>(h.iteration));
  put<std::uint32_t>(out, 24, h.first_unit);
  put<std::uint32_t>(out, 28, h.last_unit);
  put<std::uint64_t>(out, 32, h.payload_bytes);
  put<std::uint32_t>(out, 40, h.payload_crc32);
  put<std::uint64_t>(out, 44, h.held_us);
  put<std::uint64_t>(out, 52, h.compute_us);
  put<std::uint64_t>(out, 60, h.predicted_us);
  put<std::uint64_t>(out, 68, h.arrived_us);
  put<std::uint64_t>(out, 76, static_cast<std::uint64_t>(h.version));
  put<std::uint32_t>(out, 84, crc32(out.data(), 84));
}

std::string encode(Header h, const void* payload, std::size_t payload_size) {
  std::string out = make_frame(payload_size);
  if (payload_size) std::memcpy(&out[kHeaderBytes], payload, payload_size);
  seal_frame(out, h);
  return out;
}

DecodeResult decode(const void* data, std::size_t size, const WireLimits& limits) {
  DecodeResult r;
  const auto* p = static_cast<const std::uint8_t*>(data);
  auto fail = [&r](std::string why) {
    r.error = std::move(why);
    return r;
  };
  if (p == nullptr || size < kHeaderBytes)
    return fail("message of " + std::to_string(size) + " bytes is shorter than the " +
                std::to_string(kHeaderBytes) + "-byte header");
  if (get<std::uint32_t>(p) != kMagic) return fail("bad magic number (not a dynacomm message)");
  const auto version = get<std::uint16_t>(p + 4);
  if (version != kProtocolVersion)
    return fail("protocol version " + std::to_string(version) + ", expected " +
                std::to_string(kProtocolVersion));
  if (get<std::uint32_t>(p + 84) != crc32(p, 84)) return fail("header checksum mismatch");

  Header& h = r.header;
  const auto type = get<std::uint16_t>(p + 6);
  if (type < 1 || type > 13) return fail("unknown message type " + std::to_string(type));
  h.type = static_cast<MessageType>(type);
  h.sender = static_cast<std::int32_t>(get<std::uint32_t>(p + 8));
  const auto codec = get<std::uint16_t>(p + 12);
  const std::uint16_t expected_codec =
      h.type == MessageType::kPush ? limits.push_codec : std::uint16_t{0};
  if (codec != expected_codec)
    return fail(std::string(to_string(h.type)) + " of codec " + std::to_string(codec) +
                ", expected " + std::to_string(expected_codec) +
                (h.type == MessageType::kPush ? " (the job's compression)" : ""));
  h.codec = static_cast<Codec>(codec);
  h.flags = get<std::uint16_t>(p + 14);
  if (h.flags & ~kKnownFlags) return fail("unknown flags " + std::to_string(h.flags));
  h.iteration = static_cast<std::int64_t>(get<std::uint64_t>(p + 16));
  h.first_unit = get<std::uint32_t>(p + 24);
  h.last_unit = get<std::uint32_t>(p + 28);
  h.payload_bytes = get<std::uint64_t>(p + 32);
  h.payload_crc32 = get<std::uint32_t>(p + 40);
  h.held_us = get<std::uint64_t>(p + 44);
  h.compute_us = get<std::uint64_t>(p + 52);
  h.predicted_us = get<std::uint64_t>(p + 60);
  h.arrived_us = get<std::uint64_t>(p + 68);
  h.version = static_cast<std::int64_t>(get<std::uint64_t>(p + 76));

  // 2^53 us is 285 years of a steady clock: beyond it the stamp is garbage (and would
  // overflow a nanosecond clock).
  if (h.arrived_us >= kMaxArrivedUs)
    return fail("arrival stamp " + std::to_string(h.arrived_us) + " us out of range");
  if (h.sender < -1 || h.sender > limits.max_sender)
    return fail("sender rank " + std::to_string(h.sender) + " out of range");
  if (h.iteration < 0) return fail("negative iteration " + std::to_string(h.iteration));
  if (h.version < 0) return fail("negative version " + std::to_string(h.version));
  std::uint64_t expected_payload = 0;
  if (carries_units(h.type)) {
    const auto n = static_cast<std::uint64_t>(limits.unit_bytes.size());
    if (h.first_unit > h.last_unit || h.last_unit >= n)
      return fail("unit range " + std::to_string(h.first_unit) + ".." +
                  std::to_string(h.last_unit) + " is not within the model's 0.." +
                  std::to_string(n ? n - 1 : 0));
    const bool encoded = h.type == MessageType::kPush && !limits.push_bytes.empty();
    const bool mixed = (h.type == MessageType::kPush && !limits.mixed_bytes.empty()) ||
                       (h.type == MessageType::kPullReply && !limits.pull_bytes.empty());
    if (mixed)  // walked once the payload is known to be whole
      expected_payload = h.payload_bytes;
    else if (h.type == MessageType::kPullReply || h.type == MessageType::kPush)
      for (auto u = h.first_unit; u <= h.last_unit; ++u)
        expected_payload +=
            static_cast<std::uint64_t>(!encoded               ? limits.unit_bytes[u]
                                       : limits.push_bytes_at ? limits.push_bytes_at(u, h.iteration)
                                                              : limits.push_bytes.at(u));
    if (h.type == MessageType::kPushAck) expected_payload = kUpdateReportBytes;
    if (h.payload_bytes != expected_payload)
      return fail("payload of " + std::to_string(h.payload_bytes) + " bytes for units " +
                  std::to_string(h.first_unit) + ".." + std::to_string(h.last_unit) +
                  ", expected " + std::to_string(expected_payload));
  } else if (h.type == MessageType::kInit) {
    // The initial parameters of units first..last (all of them, from worker 0).
    const auto n = static_cast<std::uint64_t>(limits.unit_bytes.size());
    if (h.first_unit > h.last_unit || h.last_unit >= n)
      return fail("init unit range " + std::to_string(h.first_unit) + ".." +
                  std::to_string(h.last_unit) + " is not within the model's units");
    for (auto u = h.first_unit; u <= h.last_unit; ++u)
      expected_payload += static_cast<std::uint64_t>(limits.unit_bytes[u]);
    if (h.payload_bytes != expected_payload)
      return fail("init payload of " + std::to_string(h.payload_bytes) + " bytes, expected " +
                  std::to_string(expected_payload));
  } else if (h.type == MessageType::kPlans || h.type == MessageType::kReplan) {
    if (h.payload_bytes > limits.max_plans_payload)
      return fail(std::string(to_string(h.type)) + " payload of " +
                  std::to_string(h.payload_bytes) + " bytes exceeds the limit of " +
                  std::to_string(limits.max_plans_payload));
  } else if (h.type == MessageType::kHello || h.type == MessageType::kError ||
             h.type == MessageType::kJobConfig) {
    std::uint64_t model_bytes = 0;
    for (auto b : limits.unit_bytes) model_bytes += static_cast<std::uint64_t>(b);
    const std::uint64_t cap =
        limits.max_other_payload + (h.type == MessageType::kInit ? model_bytes : 0);
    if (h.payload_bytes > cap)
      return fail(std::string(to_string(h.type)) + " payload of " +
                  std::to_string(h.payload_bytes) + " bytes exceeds the limit of " +
                  std::to_string(cap));
  } else if (h.payload_bytes != 0) {
    return fail(std::string(to_string(h.type)) + " message carries an unexpected payload");
  }
  if (size - kHeaderBytes != h.payload_bytes)
    return fail("message has " + std::to_string(size - kHeaderBytes) +
                " payload bytes, header says " + std::to_string(h.payload_bytes));
  const std::uint8_t* payload = p + kHeaderBytes;
  if (h.payload_bytes &&
      crc32(payload, static_cast<std::size_t>(h.payload_bytes)) != h.payload_crc32)
    return fail("payload checksum mismatch");
  r.payload = h.payload_bytes ? payload : nullptr;
  if (h.type == MessageType::kPush && !limits.mixed_bytes.empty())
    if (std::string e = walk_error("mixed push", h, payload, limits.mixed_bytes); !e.empty())
      return fail(e);
  if (h.type == MessageType::kPullReply && !limits.pull_bytes.empty())
    if (std::string e = walk_error("pull reply", h, payload, limits.pull_bytes); !e.empty())
      return fail(e);
  return r;
}

void put_update_report(char* out, const UpdateReport& r) {
  std::size_t offset = 0;
  for (const std::uint64_t v : {r.sequence, r.bytes, r.us})
    for (std::size_t i = 0; i < 8; ++i) out[offset++] = static_cast<char>((v >> (8 * i)) & 0xff);
}

UpdateReport get_update_report(const void* payload) {
  const auto* p = static_cast<const std::uint8_t*>(payload);
  return {get<std::uint64_t>(p), get<std::uint64_t>(p + 8), get<std::uint64_t>(p + 16)};
}

}  // namespace dynacomm::net

#include "net/wire.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>

namespace dynacomm::net {
namespace {

const WireLimits kLimits{{16, 8, 400}, 7, 1024};

std::string error_of_ack_with_payload() {
  std::string x(4, 'x');
  std::string m = encode(Header{MessageType::kPushAck, -1, 5, 1, 2}, x.data(), x.size());
  return decode(m.data(), m.size(), kLimits).error;
}

std::string push_message() {
  std::vector<float> grads(2 + 100, 1.5f);  // units 1..2: 8 + 400 bytes
  Header h{MessageType::kPush, 3, 42, 1, 2};
  h.compute_us = 987654321;
  h.predicted_us = 2718000;
  return encode(h, grads.data(), grads.size() * 4);
}

TEST(Wire, RoundTrip) {
  std::string m = push_message();
  ASSERT_EQ(m.size(), kHeaderBytes + 408);
  DecodeResult r = decode(m.data(), m.size(), kLimits);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.header.type, MessageType::kPush);
  EXPECT_EQ(r.header.sender, 3);
  EXPECT_EQ(r.header.iteration, 42);
  EXPECT_EQ(r.header.first_unit, 1u);
  EXPECT_EQ(r.header.last_unit, 2u);
  EXPECT_EQ(r.header.payload_bytes, 408u);
  EXPECT_EQ(r.header.compute_us, 987654321u);
  EXPECT_EQ(r.header.predicted_us, 2718000u);
  EXPECT_EQ(reinterpret_cast<const float*>(r.payload)[0], 1.5f);
  std::string req = encode(Header{MessageType::kPullRequest, 0, 5, 0, 2}, nullptr, 0);
  EXPECT_TRUE(decode(req.data(), req.size(), kLimits).ok());
  Header ack{MessageType::kPushAck, -1, 5, 1, 2};
  ack.held_us = 123456789012ull;
  ack.arrived_us = 9876543210123ull;
  char report[kUpdateReportBytes];
  put_update_report(report, {7, 3'000'000'000ull, 4567});
  std::string a = encode(ack, report, sizeof report);
  DecodeResult ra = decode(a.data(), a.size(), kLimits);
  ASSERT_TRUE(ra.ok()) << ra.error;
  EXPECT_EQ(ra.header.type, MessageType::kPushAck);
  EXPECT_EQ(ra.header.held_us, 123456789012ull);
  EXPECT_EQ(ra.header.arrived_us, 9876543210123ull);
  const UpdateReport u = get_update_report(ra.payload);
  EXPECT_EQ(u.sequence, 7u);
  EXPECT_EQ(u.bytes, 3'000'000'000ull);
  EXPECT_EQ(u.us, 4567u);
  EXPECT_EQ(error_of_ack_with_payload(), "payload of 4 bytes for units 1..2, expected 24");
}

// A frame built in place is byte for byte the one encode() builds.
TEST(Wire, FramesBuiltInPlaceEqualEncoded) {
  std::vector<float> grads(102, 2.5f);
  Header h{MessageType::kPullReply, -1, 9, 1, 2};
  h.held_us = 77;
  h.compute_us = 1234;
  h.predicted_us = 5678;
  h.arrived_us = 91011;
  std::string f = make_frame(grads.size() * 4);
  ASSERT_EQ(f.size(), kHeaderBytes + 408);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&f[kHeaderBytes]) % alignof(float), 0u);
  std::memcpy(&f[kHeaderBytes], grads.data(), 408);
  seal_frame(f, h);
  EXPECT_EQ(f, encode(h, grads.data(), 408));
  EXPECT_TRUE(decode(f.data(), f.size(), kLimits).ok());
}

// Re-encodes a header whose fields we tamper with, so the header checksum is right and
// the field checks themselves are exercised.
std::string with(Header h, std::size_t payload_size) {
  std::string payload(payload_size, 'x');
  return encode(h, payload.data(), payload.size());
}

std::string error_of(const std::string& m) { return decode(m.data(), m.size(), kLimits).error; }

TEST(Wire, RejectsMalformedFields) {
  EXPECT_NE(error_of("short").find("shorter than the 88-byte header"), std::string::npos);
  std::string m = push_message();
  m[0] = 'X';
  EXPECT_EQ(error_of(m), "bad magic number (not a dynacomm message)");
  m = push_message();
  m[4] = 99;
  EXPECT_EQ(error_of(m), "protocol version 99, expected " + std::to_string(kProtocolVersion));
  m = push_message();
  m[20] ^= 1;  // iteration bit flipped in transit
  EXPECT_EQ(error_of(m), "header checksum mismatch");
  m = push_message();
  m[47] ^= 1;  // held_us is covered by the header checksum too
  EXPECT_EQ(error_of(m), "header checksum mismatch");
  m = push_message();
  m[55] ^= 1;  // and compute_us
  EXPECT_EQ(error_of(m), "header checksum mismatch");
  m = push_message();
  m[63] ^= 1;  // and predicted_us
  EXPECT_EQ(error_of(m), "header checksum mismatch");
  m = push_message();
  m[70] ^= 1;  // and arrived_us
  EXPECT_EQ(error_of(m), "header checksum mismatch");
  {
    Header late{MessageType::kPushAck, -1, 5, 1, 2};
    late.arrived_us = kMaxArrivedUs;  // checksummed, but no clock reads that
    const std::string report(kUpdateReportBytes, '\0');
    m = encode(late, report.data(), report.size());
    EXPECT_EQ(error_of(m), "arrival stamp 9007199254740992 us out of range");
  }
  m = push_message();
  m[kHeaderBytes + 5] ^= 1;
  EXPECT_EQ(error_of(m), "payload checksum mismatch");
  m = push_message();
  m.pop_back();
  EXPECT_NE(error_of(m).find("message has 407 payload bytes, header says 408"), std::string::npos);

  EXPECT_EQ(error_of(with(Header{MessageType::kPush, 3, 1, 2, 3}, 400)),
            "unit range 2..3 is not within the model's 0..2");
  EXPECT_EQ(error_of(with(Header{MessageType::kPush, 3, 1, 2, 1}, 0)),
            "unit range 2..1 is not within the model's 0..2");
  EXPECT_EQ(error_of(with(Header{MessageType::kPush, 3, 1, 1, 2}, 404)),
            "payload of 404 bytes for units 1..2, expected 408");
  EXPECT_EQ(error_of(with(Header{MessageType::kPush, 8, 1, 0, 0}, 16)),
            "sender rank 8 out of range");
  EXPECT_EQ(error_of(with(Header{MessageType::kPush, 1, -5, 0, 0}, 16)), "negative iteration -5");
  EXPECT_EQ(error_of(with(Header{MessageType::kShutdown, 1, 0, 0, 0}, 3)),
            "shutdown message carries an unexpected payload");
  EXPECT_EQ(error_of(with(Header{MessageType::kInit, 0, 0, 0, 2}, 100)),
            "init payload of 100 bytes, expected 424");
  EXPECT_NE(error_of(with(Header{MessageType::kError, 1, 0, 0, 0}, 5000)).find("exceeds the limit"),
            std::string::npos);
  Header h{MessageType::kPush, 1, 0, 0, 0};
  h.codec = static_cast<Codec>(9);
  EXPECT_EQ(error_of(with(h, 16)), "push of codec 9, expected 0 (the job's compression)");
  h = Header{MessageType::kPullReply, -1, 0, 0, 0};
  h.codec = static_cast<Codec>(6);
  EXPECT_EQ(error_of(with(h, 16)), "pull-reply of codec 6, expected 0");
  h = Header{static_cast<MessageType>(99), 1, 0, 0, 0};
  EXPECT_EQ(error_of(with(h, 0)), "unknown message type 99");
  EXPECT_EQ(error_of(with(Header{MessageType::kPlans, 1, 3, 0, 0}, 70000)), "");  // JSON
  EXPECT_EQ(error_of(with(Header{MessageType::kPlans, 1, 3, 0, 0}, (8 << 20) + 1)),
            "plans payload of 8388609 bytes exceeds the limit of 8388608");
  EXPECT_EQ(error_of(with(Header{MessageType::kReplan, 1, 3, 0, 0}, 70000)), "");
  EXPECT_EQ(error_of(with(Header{MessageType::kReplan, 1, 3, 0, 0}, (8 << 20) + 1)),
            "replan payload of 8388609 bytes exceeds the limit of 8388608");
  EXPECT_EQ(error_of(with(Header{MessageType::kJobConfig, 1, 0, 0, 0}, 0)), "");
  EXPECT_EQ(error_of(with(Header{MessageType::kJobConfig, -1, 0, 0, 0}, 1000)), "");
  EXPECT_EQ(error_of(with(Header{MessageType::kHeartbeat, 1, 0, 0, 0}, 0)), "");
  EXPECT_EQ(error_of(with(Header{MessageType::kHeartbeat, 1, 0, 0, 0}, 1)),
            "heartbeat message carries an unexpected payload");
  EXPECT_EQ(error_of(with(Header{MessageType::kCheckpoint, -1, 30, 0, 0}, 0)), "");
  EXPECT_EQ(error_of(with(Header{MessageType::kCheckpoint, -1, 30, 0, 0}, 8)),
            "checkpoint message carries an unexpected payload");
  EXPECT_EQ(error_of(with(Header{static_cast<MessageType>(14), 1, 3, 0, 0}, 0)),
            "unknown message type 14");
  h = Header{MessageType::kPullRequest, 1, 0, 0, 0};
  h.flags = kFlagInOrder;
  EXPECT_EQ(error_of(with(h, 0)), "");
  h.flags = 10;
  EXPECT_EQ(error_of(with(h, 0)), "unknown flags 10");
}

// Property: no input, however mangled, crashes the decoder or yields an out-of-range
// header that claims to be valid.
TEST(Wire, FuzzedInputsNeverPassUnchecked) {
  std::mt19937_64 rng(99);
  const std::string good = push_message();
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string m = good;
    switch (i % 4) {
      case 0:
        m[rng() % m.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:
        m.resize(rng() % (m.size() + 1));
        break;
      case 2:
        for (auto& c : m) c = static_cast<char>(rng());
        break;
      case 3:
        m[rng() % kHeaderBytes] = static_cast<char>(rng());
        break;
    }
    DecodeResult r = decode(m.data(), m.size(), kLimits);
    if (!r.ok()) continue;
    if (m != good) ++accepted;  // a mutation can leave the message as it was
    ASSERT_LE(r.header.last_unit, 2u);
    ASSERT_EQ(m.size(), kHeaderBytes + r.header.payload_bytes);
  }
  EXPECT_EQ(accepted, 0) << "a corrupted message was accepted";
}

}  // namespace
}  // namespace dynacomm::net

namespace dynacomm::net {
namespace {

TEST(Wire, FrameTypeReadsAnEncodedFramesType) {
  EXPECT_EQ(frame_type(encode(Header{MessageType::kPush, 1, 2, 0, 0}, "abcd", 4)),
            MessageType::kPush);
  EXPECT_EQ(frame_type(encode(Header{MessageType::kPullRequest, 1, 2, 0, 0}, nullptr, 0)),
            MessageType::kPullRequest);
  EXPECT_EQ(frame_type(std::string(10, 'x')), MessageType::kError) << "shorter than a header";
}

// A job that compresses its pushes: each push carries the job's codec, and its payload is
// the sum of its units' encoded sizes; pulls stay float32.
TEST(Wire, CompressedPushesCarryTheJobsCodecAndEncodedSizes) {
  WireLimits limits = kLimits;  // units of 16, 8 and 400 bytes
  limits.push_codec = 6;
  limits.push_bytes = {8, 8, 80};
  Header h{MessageType::kPush, 1, 0, 1, 2};
  h.codec = static_cast<Codec>(6);
  std::string payload(88, '\0');
  std::string m = encode(h, payload.data(), payload.size());
  EXPECT_EQ(decode(m.data(), m.size(), limits).error, "");
  m = encode(h, payload.data(), 408);
  EXPECT_EQ(decode(m.data(), m.size(), limits).error,
            "payload of 408 bytes for units 1..2, expected 88");
  h.codec = Codec::kFloat32;
  m = encode(h, payload.data(), payload.size());
  EXPECT_EQ(decode(m.data(), m.size(), limits).error,
            "push of codec 0, expected 6 (the job's compression)");
  std::string params(408, '\0');
  m = encode(Header{MessageType::kPullReply, -1, 0, 1, 2}, params.data(), params.size());
  EXPECT_EQ(decode(m.data(), m.size(), limits).error, "");
}

// A mixed job: each unit of a push starts with its method's index, and the sizes follow
// the methods named; a wrong index, a short or a long payload is refused.
TEST(Wire, MixedPushesAreWalkedUnitByUnit) {
  WireLimits limits = kLimits;  // units of 16, 8 and 400 bytes
  limits.push_codec = 255;
  limits.mixed_bytes = {{17, 9, 401}, {9, 5, 201}};  // float32, fp16, each with its byte
  Header h{MessageType::kPush, 1, 0, 1, 2};
  h.codec = static_cast<Codec>(255);
  std::string payload(9 + 201, '\0');
  payload[0] = 0;  // unit 1 dense
  payload[9] = 1;  // unit 2 fp16
  std::string m = encode(h, payload.data(), payload.size());
  EXPECT_EQ(decode(m.data(), m.size(), limits).error, "");
  payload[9] = 0;
  m = encode(h, payload.data(), payload.size());
  EXPECT_EQ(decode(m.data(), m.size(), limits).error,
            "mixed push of 210 bytes for units 1..2, their methods' encodings take 410");
  payload[9] = 2;
  m = encode(h, payload.data(), payload.size());
  EXPECT_EQ(decode(m.data(), m.size(), limits).error,
            "mixed push: unit 2 names method 2 of a job with 2");
  m = encode(h, payload.data(), 9);
  EXPECT_EQ(decode(m.data(), m.size(), limits).error, "mixed push of 9 bytes ends before unit 2");
  m = encode(h, nullptr, 0);
  EXPECT_EQ(decode(m.data(), m.size(), limits).error, "mixed push of 0 bytes ends before unit 1");
}

// Compressed pulls: each unit of a reply starts with its kind (a copy, an update), walked
// like a mixed push; a float32 reply of that job is refused.
TEST(Wire, CompressedPullRepliesAreWalkedUnitByUnit) {
  WireLimits limits = kLimits;  // units of 16, 8 and 400 bytes
  limits.pull_bytes = {{17, 9, 401}, {9, 5, 41}};
  Header h{MessageType::kPullReply, -1, 3, 0, 2};
  std::string payload(17 + 5 + 41, '\0');
  payload[0] = 0;   // unit 0 a copy
  payload[17] = 1;  // unit 1 an update
  payload[22] = 1;  // unit 2 an update
  std::string m = encode(h, payload.data(), payload.size());
  EXPECT_EQ(decode(m.data(), m.size(), limits).error, "");
  payload[22] = 7;
  m = encode(h, payload.data(), payload.size());
  EXPECT_EQ(decode(m.data(), m.size(), limits).error,
            "pull reply: unit 2 names method 7 of a job with 2");
  std::string dense(16 + 8 + 400, '\0');
  m = encode(h, dense.data(), dense.size());
  EXPECT_NE(decode(m.data(), m.size(), limits).error, "");
  limits.pull_bytes.clear();
  EXPECT_EQ(decode(m.data(), m.size(), limits).error, "");
}

}  // namespace
}  // namespace dynacomm::net

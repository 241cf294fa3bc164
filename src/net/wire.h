// The wire format of every PS <-> worker message: a fixed 88-byte little-endian header,
// then the payload. The decoder validates every field before anything else looks at the
// message, and reports what was wrong instead of throwing or crashing: a remote peer must
// never be able to crash us or corrupt the server.
//
//   Header h{MessageType::kPush, /*sender=*/1, /*iteration=*/7, /*first=*/9, /*last=*/10};
//   std::string bytes = encode(h, payload, payload_size);
//   WireLimits limits{unit_bytes};          // what the job's model allows
//   DecodeResult r = decode(bytes.data(), bytes.size(), limits);
//   if (!r.ok()) log("dropped message from peer " + peer + ": " + r.error);
//
// Layout (offsets in bytes): magic u32 "DYNC" | version u16 | type u16 | sender i32 |
// codec u16 | flags u16 | iteration i64 | first_unit u32 | last_unit u32 |
// payload_bytes u64 | payload_crc32 u32 | held_us u64 | compute_us u64 | predicted_us u64 |
// arrived_us u64 | version i64 | header_crc32 u32 (over bytes 0..83). The payload starts
// 8-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dynacomm::net {

constexpr std::uint32_t kMagic = 0x434E5944;  // "DYNC" little-endian
constexpr std::uint16_t kProtocolVersion = 11;
constexpr std::size_t kHeaderBytes = 88;
constexpr std::uint64_t kMaxArrivedUs = 1ull << 53;  // decode refuses larger stamps

enum class MessageType : std::uint16_t {
  kHello = 1,        // worker -> PS: join; payload: JSON job description. PS -> worker: welcome
  kInit = 2,         // worker 0 -> PS: initial parameters of units first..last
  kPullRequest = 3,  // worker -> PS: units first..last at `iteration`; payload: none
  kPullReply = 4,    // PS -> worker: parameters of units first..last
  kPush = 5,         // worker -> PS: gradients of units first..last for `iteration`
  kError = 6,        // either way: payload is a UTF-8 reason
  kShutdown = 7,     // either way: payload: none; worker -> PS: `iteration` is the round
                     // after its last push
  kPushAck = 8,      // PS -> worker: the push of units first..last for `iteration` arrived;
                     // payload: the PS's latest update (UpdateReport)
  // Worker -> PS: its full-duplex plans after the warm-up, with their predictions (JSON).
  // PS -> every worker, once all have sent theirs: the job's, each the plan of the worker
  // that predicted itself slowest with it (ps/server.h).
  kPlans = 9,
  // Re-planning a job's full-duplex plan together (ps/server.h). Worker -> PS, after each
  // of its re-planning evaluations: its prediction of the job's plan and, when it would
  // change, the plan it proposes with its prediction (JSON). PS -> every worker: the job's
  // next plan and the iteration it runs from.
  kReplan = 10,
  // Worker -> PS, before its hello: the job's configuration, please (payload: none).
  // PS -> worker: the settings the PS was given (net::JobConfig, JSON).
  kJobConfig = 11,
  // Worker -> PS, every second from its communication thread: it is alive (payload: none).
  // The PS drops a worker it has heard nothing from for its --peer-timeout.
  kHeartbeat = 12,
  // PS -> every worker: a checkpoint of `iteration` is on disk (payload: none). Rank 0
  // writes model.pt of that iteration beside it, with its batch-norm statistics.
  kCheckpoint = 13,
};
const char* to_string(MessageType t);

// Header flags.
// On a pull request: answer this worker's in-order requests strictly in the order they
// arrived (a full-duplex plan's pull order); without it the PS answers a request as soon as
// its units are ready.
constexpr std::uint16_t kFlagInOrder = 1;
// On the PS's welcome: the job is already running (the parameters exist; the worker joins
// at the welcome's iteration and sends no initial parameters).
constexpr std::uint16_t kFlagJobRunning = 2;
// On a pull request of a job with compressed pulls (compress/pull_codec.h): answer with
// the parameters themselves, not the public copy (a worker's final fetch).
constexpr std::uint16_t kFlagExact = 4;
constexpr std::uint16_t kKnownFlags = kFlagInOrder | kFlagJobRunning | kFlagExact;

// A push ack's payload (kUpdateReportBytes, three little-endian u64): the PS's latest
// update of any units when it sent the ack, i.e. its time over the push that completed
// them (the sum and the optimiser step: the aggregation); all 0 before the first. Every
// worker sees the updates whoever's push completed them.
struct UpdateReport {
  std::uint64_t sequence = 0;  // the PS's count of updates: 1, 2, ...
  std::uint64_t bytes = 0;     // of the push that completed the units
  std::uint64_t us = 0;        // the PS's time over that push
};
constexpr std::size_t kUpdateReportBytes = 24;
void put_update_report(char* out, const UpdateReport& r);  // kUpdateReportBytes of out
UpdateReport get_update_report(const void* payload);       // a decoded ack's payload

// A push's codec: compress/compressor.h's wire_codec of the job's method (1 fp16, 2 qsgd,
// 3 terngrad, 4 signsgd, 5 onebit, 6 topk, 7 randomk); its parameters are the job's, which
// every worker's hello is checked against.
enum class Codec : std::uint16_t {
  kFloat32 = 0,  // raw little-endian float32, units back to back
};

struct Header {
  MessageType type = MessageType::kHello;
  std::int32_t sender = 0;  // worker rank, or -1 for the PS
  std::int64_t iteration = 0;
  std::uint32_t first_unit = 0, last_unit = 0;
  Codec codec = Codec::kFloat32;
  std::uint16_t flags = 0;
  std::uint64_t payload_bytes = 0;  // filled in by encode
  std::uint32_t payload_crc32 = 0;  // filled in by encode
  // Microseconds the sender held the request this message answers before it could answer
  // (a pull reply: how long the units took to reach the requested version). Lets the
  // receiver tell waiting apart from transfer time without comparing clocks.
  std::uint64_t held_us = 0;
  // The BSP barrier's input. On a push: the sender's compute time in this iteration up to
  // when the push was built (forward and backward so far; the last push carries the whole
  // iteration's). On a pull reply for iteration t: the slowest worker's compute in t - 1 as
  // far as the PS has heard (0: nothing yet), so each worker can plan for the compute that
  // actually paces the job. On a push ack: how long the PS took to decode the push
  // (compressed pushes; worker/codec_times.h plans with it).
  std::uint64_t compute_us = 0;
  // The barrier's other input. On a push: the sender's predicted time of this iteration,
  // for the plan it runs and its own link (0: no prediction yet, e.g. during warm-up). On a
  // pull reply for iteration t: the largest any worker sent for t - 1 (0: none), so each
  // worker knows what the slowest link or device predicts for the whole job.
  std::uint64_t predicted_us = 0;
  // When the message this one answers reached the sender, on the sender's steady clock
  // (microseconds since its epoch; 0: not said): a push ack, the push's; a pull reply, the
  // request's; the PS's welcome, the hello's. With the offset between the two clocks, taken
  // at the hello, the receiver times each transfer's arrival without the answer's trip,
  // which may queue behind other messages (an ack behind pull replies).
  std::uint64_t arrived_us = 0;
  // On a pull reply: the oldest version of the units it carries (under BSP the iteration
  // asked for; where a pull reads the newest, ps/sync_policy.h, maybe more). 0 on others.
  std::int64_t version = 0;
};

// What a well-formed message of this job may contain.
struct WireLimits {
  std::vector<std::int64_t> unit_bytes;         // bytes of each unit, float32
  std::int32_t max_sender = 1 << 20;            // highest valid rank
  std::uint64_t max_other_payload = 64 * 1024;  // kError, kInit metadata bound
  std::uint64_t max_plans_payload = 8 << 20;    // kPlans, kReplan (a sliced plan lists every piece)
  // Pushes: the codec the job's pushes carry (compress/compressor.h's wire_codec; every
  // other message is float32, codec 0) and the bytes of each unit's encoding with it
  // (empty: unit_bytes).
  std::uint16_t push_codec = 0;
  std::vector<std::int64_t> push_bytes{};
  // Where a codec's size changes with the iteration (dgc's density warm-up): each unit's
  // bytes at the header's iteration, in place of push_bytes (which must be non-empty).
  std::function<std::int64_t(std::uint32_t unit, std::int64_t iteration)> push_bytes_at{};
  // A mixed job's pushes (compress/push_codec.h, push_codec 255): per method, each unit's
  // bytes with its index byte. Each unit of a push starts with its method's index.
  std::vector<std::vector<std::int64_t>> mixed_bytes{};
  // Pull replies of a job with compressed pulls (compress/pull_codec.h): per kind (copy,
  // update), each unit's bytes with its kind byte; empty: float32, unit_bytes.
  std::vector<std::vector<std::int64_t>> pull_bytes{};
};

struct DecodeResult {
  Header header;
  const std::uint8_t* payload = nullptr;  // points into the decoded buffer
  std::string error;                      // empty when the message is valid
  bool ok() const { return error.empty(); }
};

// Header then payload, in one buffer.
std::string encode(Header header, const void* payload, std::size_t payload_size);

// The same frame built in place, without copying a payload twice: make_frame allocates
// header + payload (the payload at frame.data() + kHeaderBytes, 8-byte aligned), the
// caller writes the payload there, and seal_frame writes the header and both checksums.
//
//   std::string f = make_frame(bytes);
//   store.pull(a, b, t, reinterpret_cast<float*>(&f[kHeaderBytes]));
//   seal_frame(f, Header{MessageType::kPullReply, -1, t, a, b});
std::string make_frame(std::size_t payload_size);
void seal_frame(std::string& frame, Header header);

// Never throws on any input. Checks, in order: length, magic, version, header checksum,
// type, codec, the arrival stamp's range, sender, unit range, payload length against the
// units' sizes, the payload's presence and its checksum.
DecodeResult decode(const void* data, std::size_t size, const WireLimits& limits);

// The type of a frame this process encoded, read without validating it (for a transport
// that treats messages by kind); kError for one shorter than a header.
MessageType frame_type(const std::string& frame);

std::uint32_t crc32(const void* data, std::size_t size);

}  // namespace dynacomm::net

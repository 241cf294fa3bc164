// libFuzzer: the wire decoder and every job-protocol decoder, on any bytes. The first
// byte picks the decoder; the rest is its input. Nothing may crash, hang or leak; a bad
// input is an error result or an InvalidInput.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "net/job_protocol.h"
#include "net/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dynacomm;
  if (size == 0) return 0;
  const std::uint8_t pick = data[0];
  ++data;
  --size;
  // A small model's layout: 3 units.
  net::WireLimits limits{{12, 4, 40}, 3, 4096};
  if (pick & 0x80) {  // a mixed job's pushes: two methods, each unit's bytes per method
    limits.push_codec = 255;
    limits.mixed_bytes = {{13, 5, 41}, {7, 3, 21}};
  }
  try {
    switch (pick % 7) {
      case 0: {
        const net::DecodeResult r = net::decode(data, size, limits);
        if (r.ok() && r.header.payload_bytes > 0) (void)r.payload[r.header.payload_bytes - 1];
        break;
      }
      case 1:
        (void)net::decode_hello(data, size);
        break;
      case 2:
        (void)net::decode_job_config(data, size);
        break;
      case 3:
        (void)net::decode_plan_offer(data, size);
        break;
      case 4:
        (void)net::decode_agreed_plans(data, size);
        break;
      case 5:
        (void)net::decode_replan_report(data, size);
        break;
      case 6:
        (void)net::decode_job_plan_change(data, size);
        break;
    }
  } catch (const InvalidInput&) {  // the decoders' one way to refuse
  }
  return 0;
}

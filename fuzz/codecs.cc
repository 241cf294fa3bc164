// libFuzzer: every compression method's decoder (compress/), as the PS runs it on a push's
// payload, and a compressed pull reply's atom as a worker applies it. The first byte picks
// the method (bit 7: a mixed job's atom; bit 6: a pull reply's), the next two the
// value count; the rest is the payload. Nothing may crash or read out of bounds; a bad payload is
// an InvalidInput.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "compress/compressor.h"
#include "compress/pull_codec.h"
#include "compress/push_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dynacomm;
  if (size < 3) return 0;
  static const std::vector<std::string> specs = {
      "none", "fp16",     "qsgd:64",     "qsgd:3",  "terngrad",     "signsgd",
      "efsignsgd", "onebit", "topk:0.25", "topk:1", "randomk:0.25", "randomk:0.01"};
  const std::string& spec = specs[data[0] % specs.size()];
  const std::int64_t floats = data[1] | (data[2] << 8);
  data += 3;
  size -= 3;
  auto codec = compress::make_compressor(spec, /*seed=*/7);
  // Bit 7 of the first byte: a mixed job's atom (--compress auto), its method byte first.
  static const compress::PushCodec mixed("auto:qsgd:3+topk:0.25+randomk:0.25+onebit", 7);
  std::vector<float> scratch;
  // Bit 6: a compressed pull reply's atom as a worker applies it (its kind byte first).
  static const compress::PullCodec pulls("topk:0.25", 7);
  if (data[-3] & 0x40) {
    std::vector<float> copy(static_cast<std::size_t>(floats), 1.0f);
    try {
      pulls.apply({floats % 5, floats % 3}, data, size, floats, copy.data(), nullptr);
    } catch (const InvalidInput&) {
    }
    return 0;
  }
  try {
    std::size_t used = 0;
    const float* v = (data[-3] & 0x80)
                         ? mixed.decode({floats % 5, floats % 3}, data, size, floats, scratch, used)
                         : codec->decode({floats % 5, floats % 3}, data, size, floats, scratch);
    volatile float sum = 0;
    for (std::int64_t i = 0; i < floats; ++i) sum = sum + v[i];  // every value readable
  } catch (const InvalidInput&) {
  }
  return 0;
}

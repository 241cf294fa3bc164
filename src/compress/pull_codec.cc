#include "compress/pull_codec.h"

#include <cstring>

#include "base/error.h"
#include "compress/push_codec.h"

namespace dynacomm::compress {

PullCodec::PullCodec(const std::string& spec, std::uint64_t seed) {
  const std::string where = "--compress-pulls '" + spec + "': ";
  std::string head = spec;
  if (const auto comma = spec.find(','); comma != std::string::npos) {
    head = spec.substr(0, comma);
    if (spec.substr(comma + 1) == "ef")
      throw InvalidInput(where +
                         "pulls carry no ,ef: what an encoding leaves out stays in the PS's "
                         "parameters less the public copy, and goes out with the next update");
  }
  if (!auto_methods(spec).empty()) throw InvalidInput(where + "one method, not auto");
  if (moves_momentum(spec))
    throw InvalidInput(where + "dgc's momentum correction belongs to gradients, not to pulls");
  if (head == "none") {
    make_compressor(spec);  // checks what follows
    return;
  }
  method_ = make_compressor(head + ",noef", seed);
}

std::string PullCodec::name() const { return method_ ? method_->name() : "none"; }

std::size_t PullCodec::copy_bytes(std::int64_t floats) const {
  return static_cast<std::size_t>(floats) * sizeof(float) + (method_ ? 1 : 0);
}

std::size_t PullCodec::delta_bytes(std::int64_t floats, std::int64_t version) const {
  if (!method_) throw InvalidInput("dense pulls carry no updates");
  return 1 + method_->encoded_bytes(floats, version);
}

std::vector<std::vector<std::int64_t>> PullCodec::reply_table(
    const std::vector<std::int64_t>& atom_floats) const {
  if (!method_) return {};
  std::vector<std::vector<std::int64_t>> table(2);
  for (const std::int64_t n : atom_floats) {
    table[kCopy].push_back(static_cast<std::int64_t>(copy_bytes(n)));
    table[kDelta].push_back(static_cast<std::int64_t>(delta_bytes(n, 0)));
  }
  return table;
}

void PullCodec::encode_delta(Slot slot, const float* delta, std::int64_t floats,
                             std::uint8_t* out) {
  if (!method_) throw InvalidInput("dense pulls carry no updates");
  *out++ = kDelta;
  method_->encode(slot, delta, floats, out);
}

std::size_t PullCodec::apply(Slot slot, const std::uint8_t* in, std::size_t available,
                             std::int64_t floats, float* copy, Kind* kind) const {
  const std::size_t values = static_cast<std::size_t>(floats) * sizeof(float);
  if (!method_) {  // dense: float32 values, no kind byte
    if (available < values)
      throw InvalidInput("pull reply ends " + std::to_string(values - available) +
                         " bytes early");
    if (values > 0) std::memcpy(copy, in, values);
    if (kind) *kind = kCopy;
    return values;
  }
  if (available < 1) throw InvalidInput("pull reply ends before an atom's kind byte");
  const std::uint8_t k = *in++;
  --available;
  if (k == kCopy) {
    if (available < values)
      throw InvalidInput("pull reply's copy ends " + std::to_string(values - available) +
                         " bytes early");
    if (values > 0) std::memcpy(copy, in, values);
  } else if (k == kDelta) {
    const std::size_t size = method_->encoded_bytes(floats, slot.iteration);
    if (size > available)
      throw InvalidInput("pull reply's update needs " + std::to_string(size) + " bytes, " +
                         std::to_string(available) + " left");
    const float* d = method_->decode(slot, in, size, floats, scratch_);
    for (std::int64_t i = 0; i < floats; ++i) copy[i] += d[i];
    if (kind) *kind = kDelta;
    return 1 + size;
  } else {
    throw InvalidInput("pull reply: unknown kind " + std::to_string(k) + " of an atom");
  }
  if (kind) *kind = kCopy;
  return 1 + values;
}

}  // namespace dynacomm::compress

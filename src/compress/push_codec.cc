#include "compress/push_codec.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "compress/powersgd.h"

namespace dynacomm::compress {

std::vector<std::string> auto_methods(const std::string& spec) {
  if (spec != "auto" && spec.rfind("auto:", 0) != 0) return {};
  std::vector<std::string> names{"none", "fp16"};
  std::string listed = spec == "auto" ? "topk:0.01" : spec.substr(5);
  if (listed.empty()) throw InvalidInput("compression 'auto:': list methods after the colon");
  std::size_t at = 0;
  while (at <= listed.size()) {
    const std::size_t plus = std::min(listed.find('+', at), listed.size());
    const std::string one = listed.substr(at, plus - at);
    if (one.empty() || one.rfind("auto", 0) == 0)
      throw InvalidInput("compression '" + spec + "': methods joined by +, e.g. auto:topk:0.01+qsgd:64");
    if (moves_momentum(one))
      throw InvalidInput("compression '" + spec + "': " + one +
                         " applies the momentum on the worker, which cannot be chosen unit by "
                         "unit; use --compress " +
                         one + " alone");
    const std::string name = make_compressor(one)->name();
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    at = plus + 1;
  }
  if (names.size() > kMaxMixedMethods)
    throw InvalidInput("compression '" + spec + "': more than " +
                       std::to_string(kMaxMixedMethods) + " methods");
  return names;
}

PushCodec::PushCodec(const std::string& spec, std::uint64_t seed, double momentum) {
  const std::vector<std::string> names = auto_methods(spec);
  mixed_ = !names.empty();
  if (!mixed_) methods_.push_back(make_compressor(spec, seed, momentum));
  for (const std::string& n : names) methods_.push_back(make_compressor(n, seed));
}

std::vector<std::string> PushCodec::names() const {
  std::vector<std::string> out;
  for (const auto& m : methods_) out.push_back(m->name());
  return out;
}

std::size_t PushCodec::encoded_bytes(std::size_t k, std::int64_t floats,
                                     std::int64_t iteration) const {
  return methods_.at(k)->encoded_bytes(floats, iteration) + (mixed_ ? 1 : 0);
}

void PushCodec::encode(std::size_t k, Slot slot, const float* in, std::int64_t floats,
                       std::uint8_t* out) {
  if (mixed_) *out++ = static_cast<std::uint8_t>(k);
  methods_.at(k)->encode(slot, in, floats, out);
}

const float* PushCodec::decode(Slot slot, const std::uint8_t* in, std::size_t available,
                               std::int64_t floats, std::vector<float>& scratch,
                               std::size_t& used) const {
  std::size_t k = 0;
  if (mixed_) {
    if (available < 1) throw InvalidInput("no method byte: the push ends early");
    k = *in++;
    --available;
    if (k >= methods_.size())
      throw InvalidInput("method " + std::to_string(k) + " of a job with " +
                         std::to_string(methods_.size()));
  }
  const std::size_t size = methods_[k]->encoded_bytes(floats, slot.iteration);
  if (size > available)
    throw InvalidInput(methods_[k]->name() + ": " + std::to_string(size) + " bytes, " +
                       std::to_string(available) + " left in the push");
  used = size + (mixed_ ? 1 : 0);
  return methods_[k]->decode(slot, in, size, floats, scratch);
}

// Per method: its state's length (uint64), then the state.
std::string PushCodec::state() const {
  std::string out;
  state_into(out);
  return out;
}

void PushCodec::state_into(std::string& out) const {
  out.clear();  // its memory stays
  for (const auto& m : methods_) {
    const std::size_t at = out.size();
    out.append(sizeof(std::uint64_t), '\0');
    m->append_state(out);
    const std::uint64_t n = out.size() - at - sizeof n;
    std::memcpy(&out[at], &n, sizeof n);
  }
}

void PushCodec::set_state(const std::string& state) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (at < state.size()) {
    std::uint64_t n;
    if (state.size() - at < sizeof n || parts.size() == methods_.size())
      throw InvalidInput("codec state: not " + std::to_string(methods_.size()) + " method(s)");
    std::memcpy(&n, state.data() + at, sizeof n);
    at += sizeof n;
    if (n > state.size() - at) throw InvalidInput("codec state: truncated");
    parts.push_back(state.substr(at, n));
    at += n;
  }
  if (parts.size() != methods_.size())
    throw InvalidInput("codec state: " + std::to_string(parts.size()) + " method(s), expected " +
                       std::to_string(methods_.size()));
  // Checked on copies first, so a state that does not fit changes nothing.
  for (std::size_t k = 0; k < methods_.size(); ++k)
    make_compressor(methods_[k]->name())->set_state(parts[k]);
  for (std::size_t k = 0; k < methods_.size(); ++k) methods_[k]->set_state(parts[k]);
}

void check_codec_spec(const std::string& spec) {
  if (!powersgd_rank(spec)) PushCodec check(spec);
}

std::vector<std::string> split_codec_list(const std::string& list) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    std::size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    const std::string part = list.substr(begin, end - begin);
    begin = end + 1;
    if (part.empty()) {
      if (end == list.size()) break;
      throw InvalidInput("'" + list + "': an empty entry");
    }
    if ((part == "ef" || part == "noef") && !out.empty() &&
        out.back().find(',') == std::string::npos)
      out.back() += "," + part;
    else
      out.push_back(part);
  }
  if (out.empty()) throw InvalidInput("no codec given");
  for (std::size_t i = 0; i < out.size(); ++i) {
    try {
      check_codec_spec(out[i]);
    } catch (const InvalidInput& e) {
      throw InvalidInput("'" + out[i] + "': " + e.what());
    }
    for (std::size_t k = 0; k < i; ++k)
      if (out[k] == out[i]) throw InvalidInput("'" + out[i] + "' is listed twice");
  }
  return out;
}

}  // namespace dynacomm::compress

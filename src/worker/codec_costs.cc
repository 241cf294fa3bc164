#include "worker/codec_costs.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>

#include "base/error.h"
#include "compress/compressor.h"

namespace dynacomm::worker {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One unit with one method: every atom encoded into `wire`, then decoded from it.
plan::CodecOption measure_unit(const plan::Slicing& slicing, int unit, const float* grads,
                               const std::string& method, int reps, std::int64_t iteration) {
  const std::unique_ptr<compress::Compressor> c = compress::make_compressor(method, 0x5eed);
  plan::CodecOption option{c->name(), 0, 0, 0};
  const auto first = static_cast<std::size_t>(slicing.first_atom[static_cast<std::size_t>(unit)]);
  const auto last = static_cast<std::size_t>(slicing.first_atom[static_cast<std::size_t>(unit) + 1]);
  for (std::size_t a = first; a < last; ++a)
    option.push_bytes +=
        static_cast<std::int64_t>(c->encoded_bytes(slicing.atoms[a].params, iteration));
  if (c->name() == "none") return option;
  std::vector<std::uint8_t> wire(static_cast<std::size_t>(option.push_bytes));
  std::vector<float> scratch;
  std::vector<double> encode, decode;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    std::uint8_t* at = wire.data();
    for (std::size_t a = first; a < last; ++a) {
      const plan::Atom& atom = slicing.atoms[a];
      c->encode({static_cast<std::int64_t>(a), iteration}, grads + atom.offset, atom.params, at);
      at += c->encoded_bytes(atom.params, iteration);
    }
    encode.push_back(ms_since(t0));
    t0 = Clock::now();
    at = wire.data();
    for (std::size_t a = first; a < last; ++a) {
      const plan::Atom& atom = slicing.atoms[a];
      const std::size_t size = c->encoded_bytes(atom.params, iteration);
      c->decode({static_cast<std::int64_t>(a), iteration}, at, size, atom.params, scratch);
      at += size;
    }
    decode.push_back(ms_since(t0));
  }
  option.encode_ms = median_of(encode);
  option.decode_ms = median_of(decode);
  return option;
}

}  // namespace

plan::CodecOptions measure_codecs(const plan::Slicing& slicing,
                                  const std::vector<const float*>& grads,
                                  const std::vector<std::string>& methods, int reps,
                                  std::int64_t iteration) {
  const std::size_t units = slicing.first_atom.empty() ? 0 : slicing.first_atom.size() - 1;
  if (grads.size() != units)
    throw InvalidInput("codec costs: gradients of " + std::to_string(grads.size()) +
                       " units for a job of " + std::to_string(units));
  if (methods.empty() || reps < 1)
    throw InvalidInput("codec costs: no method to measure, or fewer than one repetition");
  plan::CodecOptions options(units);
  for (std::size_t u = 0; u < units; ++u)
    for (const std::string& m : methods)
      options[u].push_back(measure_unit(slicing, static_cast<int>(u), grads[u], m, reps, iteration));
  return options;
}

void bytes_at(plan::CodecOptions& options, const plan::Slicing& slicing, std::int64_t iteration) {
  std::map<std::string, std::unique_ptr<compress::Compressor>> made;
  for (std::size_t u = 0; u < options.size(); ++u)
    for (plan::CodecOption& o : options[u]) {
      if (o.method == "none") continue;
      std::unique_ptr<compress::Compressor>& c = made[o.method];
      if (!c) c = compress::make_compressor(o.method, 0x5eed);
      std::int64_t bytes = 0;
      for (auto a = slicing.first_atom.at(u); a < slicing.first_atom.at(u + 1); ++a)
        bytes += static_cast<std::int64_t>(
            c->encoded_bytes(slicing.atoms[static_cast<std::size_t>(a)].params, iteration));
      o.push_bytes = bytes;
    }
}

std::string describe_choice(const PushCodecs& codecs) {
  std::map<std::string, int> units;
  double encode_ms = 0, decode_ms = 0, bytes = 0, dense = 0;
  for (std::size_t u = 0; u < codecs.options.size(); ++u) {
    const plan::CodecOption& o = codecs.options[u][static_cast<std::size_t>(codecs.choice.at(u))];
    ++units[o.method];
    encode_ms += o.encode_ms;
    decode_ms += o.decode_ms;
    bytes += static_cast<double>(o.push_bytes);
    dense += static_cast<double>(codecs.options[u][0].push_bytes);
  }
  std::string out;
  for (const auto& [method, n] : units)
    out += (out.empty() ? "" : ", ") + method + " (" + std::to_string(n) + " units)";
  char line[160];
  std::snprintf(line, sizeof line,
                ": %.3f MB an iteration (dense %.3f MB), encoding %.1f ms, decoding %.1f ms",
                bytes / 1e6, dense / 1e6, encode_ms, decode_ms);
  return out + line;
}

}  // namespace dynacomm::worker

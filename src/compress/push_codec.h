// The codec of a job's pushes: one method everywhere (--compress METHOD) or, per atom, one
// of several (--compress auto[:M1+M2+...]: dense, fp16 and the listed methods, chosen per
// unit by the planner from measured costs, plan/planners/codec_choice.h). A mixed push
// prefixes each atom's encoding with one byte, the index of its method in the job's list,
// so a push says how to read it and the choice may change between any two iterations. The
// worker encodes with it, the PS decodes with it; the wire checks sizes against
// encoded_bytes of every method (net/wire.h, WireLimits::mixed_bytes).
//
//   PushCodec c("auto:topk:0.01", seed);  // methods(): none, fp16, topk:0.01,ef
//   std::string out(c.encoded_bytes(2, n, it), '\0');
//   c.encode(2, {atom, it}, grads, n, out_bytes);
//   std::size_t used = 0;
//   const float* g = c.decode({atom, it}, in, size, n, scratch, used);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compress/compressor.h"

namespace dynacomm::compress {

// The header's codec field of a mixed push (net::Codec's values are the methods' own).
constexpr std::uint16_t kMixedCodec = 255;
// At most this many methods in a mixed job (an index is one byte).
constexpr std::size_t kMaxMixedMethods = 16;

class PushCodec {
 public:
  // InvalidInput naming the bad method, a repeated one, or a list too long.
  // `momentum`: the job's, for methods that apply it on the worker (dgc; not in a mixed
  // list: the PS's own momentum would apply to some units and not to others).
  explicit PushCodec(const std::string& spec, std::uint64_t seed = 1, double momentum = 0);

  bool mixed() const { return mixed_; }
  std::uint16_t wire_codec() const { return mixed_ ? kMixedCodec : methods_[0]->wire_codec(); }
  std::size_t size() const { return methods_.size(); }
  // The canonical names of the methods, index by index ("none" first when mixed).
  std::vector<std::string> names() const;

  // Bytes of an atom of `floats` values encoded with method k (with its index byte when
  // mixed).
  std::size_t encoded_bytes(std::size_t k, std::int64_t floats, std::int64_t iteration) const;
  // Writes encoded_bytes(k, floats, slot.iteration) bytes at out.
  void encode(std::size_t k, Slot slot, const float* in, std::int64_t floats, std::uint8_t* out);
  // One atom's values from the untrusted bytes at `in` (at most `available`); `used` gets
  // the bytes it took. InvalidInput naming what is wrong.
  const float* decode(Slot slot, const std::uint8_t* in, std::size_t available,
                      std::int64_t floats, std::vector<float>& scratch, std::size_t& used) const;

  // Every method's state (residuals, DGC's momentum and accumulation), for a worker that
  // stops to take up again where it was; set_state takes what state() gave a codec of the
  // same spec (InvalidInput when it does not fit: nothing is changed then).
  std::string state() const;
  // The same into `out`, reusing its memory (a snapshot taken every iteration).
  void state_into(std::string& out) const;
  void set_state(const std::string& state);

 private:
  bool mixed_ = false;
  std::vector<std::unique_ptr<Compressor>> methods_;
};

// The methods of an `auto[:M1+M2+...]` spec (none, fp16, then the listed ones, canonical
// and without repeats; "auto" alone lists topk:0.01); empty for any other spec.
std::vector<std::string> auto_methods(const std::string& spec);

// InvalidInput unless `spec` makes a PushCodec or is --arch allreduce's powersgd[:R]
// (compress/powersgd.h).
void check_codec_spec(const std::string& spec);

// A comma-separated list of codec specs, as `dynacomm bench --compress` takes it: a ",ef"
// or ",noef" belongs to the spec before it ("none,topk:0.01,noef,auto" is none,
// topk:0.01,noef and auto). Each is checked (InvalidInput naming it); a repeat is refused.
std::vector<std::string> split_codec_list(const std::string& list);

}  // namespace dynacomm::compress

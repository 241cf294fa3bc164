// The codec seam: how one atom's gradients (a push) become bytes and back. The worker
// encodes each atom of a push segment with it, the PS decodes each atom it receives; a
// compression method is a new file behind this interface and one line in registry.cc. No
// libtorch, no networking.
//
//   std::unique_ptr<Compressor> c = make_compressor("topk:0.01", /*seed=*/1);
//   const Slot slot{/*atom=*/3, /*iteration=*/120};
//   std::string payload(c->encoded_bytes(n, slot.iteration), '\0');
//   c->encode(slot, grads, n, reinterpret_cast<std::uint8_t*>(payload.data()));
//   std::vector<float> scratch;
//   const float* g = c->decode(slot, bytes, size, n, scratch);  // InvalidInput when malformed
//
// The methods, their papers and defaults: docs/compression.md. A spec is
// METHOD[:PARAMETER][,ef|,noef]: `,ef` wraps the method in error feedback (the part an
// encoding leaves out is kept and added to the next gradient of that atom), `,noef` does
// not; each method has its default (biased ones with it, unbiased ones without).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dynacomm::compress {

// What an encoding depends on besides the values: the atom (the job's atoms are fixed, so
// per-atom state such as residuals hangs on it, and encodings do not depend on how a plan
// groups atoms into messages) and the iteration (with the job's seed, random choices draw
// from (seed, atom, iteration): the PS can draw random-k's indices itself).
struct Slot {
  std::int64_t atom = 0;
  std::int64_t iteration = 0;
};

class Compressor {
 public:
  virtual ~Compressor() = default;
  // The canonical spec ("topk:0.01,ef"): make_compressor(name()) makes the same method.
  virtual std::string name() const = 0;
  virtual std::uint16_t wire_codec() const = 0;  // the header's codec field (net::Codec)
  // Bytes of the encoding of `floats` values at `iteration`, known without encoding (the
  // wire checks a push's size with it, plans count it).
  virtual std::size_t encoded_bytes(std::int64_t floats, std::int64_t iteration) const = 0;
  // Sums of encodings of one slot decode to the sum of the values (they may be aggregated
  // encoded, as all-reduce does).
  virtual bool linear() const = 0;
  // The decoded value's expectation is the input (over the method's random draws).
  virtual bool unbiased() const = 0;
  // Writes encoded_bytes(floats, slot.iteration) bytes at out.
  virtual void encode(Slot slot, const float* in, std::int64_t floats, std::uint8_t* out) = 0;
  // The `floats` values of an untrusted encoding of `size` bytes: a pointer into `in`
  // (nothing copied) or into `scratch`. InvalidInput naming what is wrong; never reads
  // past size.
  virtual const float* decode(Slot slot, const std::uint8_t* in, std::size_t size,
                              std::int64_t floats, std::vector<float>& scratch) const = 0;
  // State a checkpoint keeps (residuals); empty when stateless. set_state takes what
  // state() gave (InvalidInput when it does not fit). append_state adds it to `out`, whose
  // memory a caller taking it often keeps (a worker's snapshot each iteration).
  std::string state() const {
    std::string s;
    append_state(s);
    return s;
  }
  virtual void append_state(std::string& out) const { (void)out; }
  virtual void set_state(const std::string& state);
};

// The method a spec names, drawing its random choices from `seed`; InvalidInput naming the
// known methods, or what is wrong with the parameter. `momentum`: the job's, for a method
// that applies it on the worker (moves_momentum).
std::unique_ptr<Compressor> make_compressor(const std::string& spec, std::uint64_t seed = 1,
                                            double momentum = 0);

// True for a spec whose method applies the job's momentum on the worker (dgc's momentum
// correction): the PS then applies none of its own.
bool moves_momentum(const std::string& spec);

// True for a spec whose encodings are float32 values at places every worker draws alike
// (randomk's, from the shared seed): --arch allreduce sums them as they are.
bool sums_selected_values(const std::string& spec);

// The methods make_compressor knows, with their parameter and default (for --help, docs).
struct MethodInfo {
  std::string name, parameter, summary;
};
const std::vector<MethodInfo>& methods();

}  // namespace dynacomm::compress

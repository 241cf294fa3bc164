// The compression methods behind make_compressor (registry.cc), one file each, and what
// their decoders share. Internal to compress/.
#pragma once

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "compress/compressor.h"

namespace dynacomm::compress {

std::unique_ptr<Compressor> make_none();
std::unique_ptr<Compressor> make_fp16();
std::unique_ptr<Compressor> make_qsgd(int levels, std::uint64_t seed);
std::unique_ptr<Compressor> make_terngrad(std::uint64_t seed);
std::unique_ptr<Compressor> make_signsgd(const std::string& name);  // signsgd, efsignsgd
std::unique_ptr<Compressor> make_onebit();
std::unique_ptr<Compressor> make_topk(double ratio);
std::unique_ptr<Compressor> make_randomk(double ratio, std::uint64_t seed);
// Final density, warm-up stage (iterations; 0: none), the job's momentum (dgc.cc).
std::unique_ptr<Compressor> make_dgc(double density, std::int64_t stage, double momentum);
// `inner` with error feedback (error_feedback.cc).
std::unique_ptr<Compressor> with_error_feedback(std::unique_ptr<Compressor> inner);

// The k (1..n) largest magnitudes of v's n values: their indices, increasing, in the first
// k places of `order` (ties to the lower index).
void select_top_k(const float* v, std::int64_t n, std::int64_t k,
                  std::vector<std::uint32_t>& order);
// Top-k's payload (size / 8 increasing uint32 indices, then as many float32 values; the
// caller has checked the size) as `floats` values in scratch; InvalidInput naming `method`
// for an index out of order or range.
const float* decode_sparse(const std::string& method, const std::uint8_t* in, std::size_t size,
                           std::int64_t floats, std::vector<float>& scratch);

// A codec's per-atom state in checkpoint bytes: the atom's index and length (int64), then
// each of its vectors (float32, all of that length).
void put_atom_state(std::string& out, std::int64_t atom,
                    std::initializer_list<const std::vector<float>*> vectors);
// The next atom's state at `at` (advanced past it) into `vectors`; its index.
// InvalidInput naming `what` when truncated.
std::int64_t take_atom_state(const std::string& in, std::size_t& at,
                             std::initializer_list<std::vector<float>*> vectors,
                             const std::string& what);

// k of top-k and random-k: ratio * n rounded, at least 1, at most n.
std::int64_t kept(double ratio, std::int64_t n);

// InvalidInput unless an encoding of `floats` values is `expected` bytes long.
inline void expect_size(const std::string& method, std::size_t size, std::size_t expected,
                        std::int64_t floats) {
  if (floats < 0 || size != expected)
    throw InvalidInput(method + " payload of " + std::to_string(size) + " bytes for " +
                       std::to_string(floats) + " values, expected " + std::to_string(expected));
}

// 0.01 as "0.01", 1 as "1" (for names that parse back).
inline std::string format_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

// A float read from possibly unaligned bytes.
inline float load_float(const std::uint8_t* p) {
  float f;
  std::memcpy(&f, p, sizeof f);
  return f;
}
inline void store_float(std::uint8_t* p, float f) { std::memcpy(p, &f, sizeof f); }

}  // namespace dynacomm::compress

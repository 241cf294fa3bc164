// PowerSGD (Vogels, Karimireddy and Jaggi, "PowerSGD: Practical Low-Rank Gradient
// Compression for Distributed Optimization", NeurIPS 2019), for --arch allreduce, where
// its two sums are two all-reduces. Each gradient matrix M (a parameter tensor viewed as
// sizes[0] x the rest, as PyTorch's powerSGD_hook views it) travels as two thin factors:
//
//   P = M Q            rows x r, summed over the workers, then orthonormalised (P^)
//   Q = M^T P^         cols x r, summed over the workers
//   sum of the M's  ~  P^ (sum of the Q's)^T
//
// Error feedback: M is the gradient plus what this worker's last approximation left out,
// and that residual becomes M - P^ Q^T with this worker's own Q, so what a worker has sent
// plus its residual is always the sum of its gradients. Warm start: the next iteration's Q
// is this one's mean over the workers (the first is drawn from the job's seed and
// orthonormalised, the same on every worker). A tensor of one dimension, or a matrix whose
// two factors would not be smaller than it, travels dense in the first sum.
//
//   PowerSgd p(tensors, /*rank=*/4, seed);
//   const auto [t0, t1] = p.tensors_in(from, to);        // a bucket's tensors
//   p.first(t0, t1, flat_grads, wire1);                   // wire1 + p.first_offset(t0)
//   allreduce(wire1 + p.first_offset(t0), p.first_offset(t1) - p.first_offset(t0));
//   p.second(t0, t1, wire1, wire2);                       // orthonormalises P in wire1
//   allreduce(wire2 + p.second_offset(t0), ...);
//   p.finish(t0, t1, wire1, wire2, workers, flat_sums);   // the bucket's sums
//
// The offsets are fixed for the job (each tensor's place in each sum's space), so how the
// buckets group the tensors does not change what is computed. Every worker must hold the
// same bits of the two sums (the ring gives them): each then computes the same P^ and writes
// the same sums, and every worker's weights stay the same bits. Pure arithmetic: no
// libtorch, no networking. One thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dynacomm::compress {

// The rank of a "powersgd" or "powersgd:R" spec (default 4); nullopt for any other spec;
// InvalidInput for a rank that is not a whole number in 1..1024.
std::optional<int> powersgd_rank(const std::string& spec);

// One parameter tensor: where it starts in the flat gradient, and its sizes.
struct TensorShape {
  std::int64_t offset = 0;
  std::vector<std::int64_t> sizes;
};

class PowerSgd {
 public:
  // `tensors` in flat order, each starting where the last ends (InvalidInput otherwise).
  PowerSgd(std::vector<TensorShape> tensors, int rank, std::uint64_t seed);

  int rank() const { return rank_; }
  std::size_t num_tensors() const { return tensors_.size(); }
  bool compressed(std::size_t t) const { return tensors_[t].compressed; }
  // A compressed tensor's residual (what this worker has not yet sent), between iterations.
  const std::vector<float>& residual(std::size_t t) const { return tensors_[t].m; }
  // A compressed tensor's Q for the next iteration (cols x r).
  const std::vector<float>& warm_start(std::size_t t) const { return tensors_[t].q; }
  // The tensors [t0, t1) that cover the flat range [from, to); Error when the range does not
  // begin and end at tensor boundaries.
  std::pair<std::size_t, std::size_t> tensors_in(std::int64_t from, std::int64_t to) const;
  // Where tensor t's values start in the first and the second sum (t == num_tensors(): the
  // sums' sizes).
  std::int64_t first_offset(std::size_t t) const;
  std::int64_t second_offset(std::size_t t) const;

  // Tensors [t0, t1): adds the gradients (`grads`: the flat gradient) to the residuals and
  // writes each one's P, or its dense values, into `first` (indexed as first_offset).
  void first(std::size_t t0, std::size_t t1, const float* grads, float* first);
  // `first` now holds the sums: orthonormalises each P in place and writes each Q = M^T P^
  // into `second` (indexed as second_offset).
  void second(std::size_t t0, std::size_t t1, float* first, float* second);
  // `second` now holds the sums too: writes the sum of the workers' gradients as the two
  // sums give it into `sums` (indexed as the flat gradient), keeps the residuals and the
  // next warm start (the mean of the Q's over `workers`).
  void finish(std::size_t t0, std::size_t t1, const float* first, const float* second, int workers,
              float* sums);

  // The residuals and warm starts, for a worker that stops and takes up again; set_state
  // takes what state() gave one of the same tensors and rank (InvalidInput otherwise).
  std::string state() const;
  void set_state(const std::string& state);

 private:
  struct Tensor {
    std::int64_t offset = 0, rows = 0, cols = 0;
    bool compressed = false;
    std::int64_t first = 0, second = 0;  // its place in each sum
    std::vector<float> m;                // compressed: gradient plus residual, then residual
    std::vector<float> q;                // compressed: the warm start (cols x r)
    std::vector<float> own_q;            // compressed: this worker's Q, until finish
  };
  std::vector<Tensor> tensors_;
  int rank_;
  std::int64_t first_total_ = 0, second_total_ = 0;
};

// Orthonormalises the r columns of the rows x r matrix `a` (row-major) in place by
// modified Gram-Schmidt; a column that is zero once the earlier ones are taken out stays
// zero.
void orthonormalise_columns(float* a, std::int64_t rows, int r);

}  // namespace dynacomm::compress

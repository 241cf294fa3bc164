// Delay compensation for ASP's pushes: DC-ASGD, Zheng, Meng, Wang, Chen, Yu, Ma and Liu,
// "Asynchronous Stochastic Gradient Descent with Delay Compensation", ICML'17, its adaptive
// variant (DC-ASGD-a). A push's gradient g was computed at the weights its rank read,
// w_read; by the time it lands its unit is at w. The gradient at w, to first order, with
// the Hessian's diagonal approximated by the gradient's outer product (lambda * g * g), is
//
//   g'_k = g_k + lambda_k * g_k^2 * (w_k - w_read_k),   lambda_k = lambda0 / sqrt(ms_k + 1e-12)
//   ms_k = 0.95 * ms_k + 0.05 * g_k^2   (every push of the unit, before its use; from 0)
//
// (the paper's defaults: lambda0 = 2, m = 0.95). A push whose rank has read nothing of the
// unit since the store began, was restored or the rank rejoined is applied as it came (ms
// still moves), and so is a corrected value out of float's range (never NaN). The PS keeps
// one copy of the unit per rank: the model N times over.
//
//   DelayCompensation dc(2.0, /*workers=*/4, unit_floats);
//   dc.read(rank, params);                            // the rank pulled the unit
//   dc.correct(rank, grads, params, corrected);       // its push, the unit since moved
//
// One per unit, under the unit's lock (not thread-safe).
#pragma once

#include <cstddef>
#include <vector>

namespace dynacomm::ps {

class DelayCompensation {
 public:
  DelayCompensation(double lambda0, int workers, std::size_t floats);

  // `rank` read the unit's weights `params` (floats of them).
  void read(int rank, const float* params);
  // `rank`'s gradient, corrected to `params` (the unit's weights now), into `out`; out
  // may be grads itself.
  void correct(int rank, const float* grads, const float* params, float* out);
  // The rank's read is gone (it rejoins; every rank after a restore).
  void forget(int rank);
  void forget_all();

 private:
  float lambda0_;
  std::size_t floats_;
  std::vector<std::vector<float>> read_;  // per rank; empty: nothing read since
  std::vector<float> mean_square_;
};

}  // namespace dynacomm::ps

#include "compress/powersgd.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "compress/draws.h"
#include "compress/methods.h"

namespace dynacomm::compress {

std::optional<int> powersgd_rank(const std::string& spec) {
  if (spec == "powersgd") return 4;
  const std::string head = "powersgd:";
  if (spec.compare(0, head.size(), head) != 0) return std::nullopt;
  const std::string text = spec.substr(head.size());
  char* stop = nullptr;
  const long r = std::strtol(text.c_str(), &stop, 10);
  if (text.empty() || *stop != 0 || r < 1 || r > 1024)
    throw InvalidInput("compression '" + spec +
                       "': the rank must be a whole number in 1..1024, e.g. powersgd:4");
  return static_cast<int>(r);
}

void orthonormalise_columns(float* a, std::int64_t rows, int r) {
  for (int j = 0; j < r; ++j) {
    for (int i = 0; i < j; ++i) {
      double dot = 0;
      for (std::int64_t k = 0; k < rows; ++k) dot += double{a[k * r + i]} * a[k * r + j];
      const auto d = static_cast<float>(dot);
      for (std::int64_t k = 0; k < rows; ++k) a[k * r + j] -= d * a[k * r + i];
    }
    double norm = 0;
    for (std::int64_t k = 0; k < rows; ++k) norm += double{a[k * r + j]} * a[k * r + j];
    norm = std::sqrt(norm);
    const float scale = norm > 0 && std::isfinite(norm) ? static_cast<float>(1 / norm) : 0.f;
    for (std::int64_t k = 0; k < rows; ++k) a[k * r + j] *= scale;
  }
}

PowerSgd::PowerSgd(std::vector<TensorShape> tensors, int rank, std::uint64_t seed) : rank_(rank) {
  if (rank < 1) throw InvalidInput("powersgd: the rank must be at least 1");
  std::int64_t at = 0;
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const TensorShape& s = tensors[t];
    if (s.offset != at)
      throw InvalidInput("powersgd: tensor " + std::to_string(t) + " starts at " +
                         std::to_string(s.offset) + ", expected " + std::to_string(at));
    Tensor x;
    x.offset = s.offset;
    x.rows = s.sizes.empty() ? 1 : s.sizes[0];
    x.cols = 1;
    for (std::size_t d = 1; d < s.sizes.size(); ++d) x.cols *= s.sizes[d];
    if (x.rows < 0 || x.cols < 0) throw InvalidInput("powersgd: a tensor of negative size");
    const std::int64_t n = x.rows * x.cols;
    x.compressed = x.rows > 1 && x.cols > 1 && rank * (x.rows + x.cols) < n;
    x.first = first_total_;
    x.second = second_total_;
    if (x.compressed) {
      first_total_ += x.rows * rank;
      second_total_ += x.cols * rank;
      x.m.assign(static_cast<std::size_t>(n), 0.f);
      x.own_q.assign(static_cast<std::size_t>(x.cols * rank), 0.f);
      x.q.resize(x.own_q.size());
      Draws d(seed, {static_cast<std::int64_t>(t), 0});
      for (float& v : x.q) v = 2 * d.uniform() - 1;
      orthonormalise_columns(x.q.data(), x.cols, rank);
    } else {
      first_total_ += n;
    }
    at += n;
    tensors_.push_back(std::move(x));
  }
}

std::pair<std::size_t, std::size_t> PowerSgd::tensors_in(std::int64_t from, std::int64_t to) const {
  std::size_t t0 = 0;
  while (t0 < tensors_.size() && tensors_[t0].offset < from) ++t0;
  std::size_t t1 = t0;
  while (t1 < tensors_.size() && tensors_[t1].offset < to) ++t1;
  const auto starts = [&](std::size_t t, std::int64_t x) {
    if (t < tensors_.size()) return tensors_[t].offset == x;
    return tensors_.empty()
               ? x == 0
               : tensors_.back().offset + tensors_.back().rows * tensors_.back().cols == x;
  };
  if (!starts(t0, from) || !starts(t1, to))
    throw Error("powersgd: values " + std::to_string(from) + ".." + std::to_string(to) +
                " do not begin and end at tensors");
  return {t0, t1};
}

std::int64_t PowerSgd::first_offset(std::size_t t) const {
  return t < tensors_.size() ? tensors_[t].first : first_total_;
}

std::int64_t PowerSgd::second_offset(std::size_t t) const {
  return t < tensors_.size() ? tensors_[t].second : second_total_;
}

void PowerSgd::first(std::size_t t0, std::size_t t1, const float* grads, float* first) {
  const int r = rank_;
  for (std::size_t t = t0; t < t1; ++t) {
    Tensor& x = tensors_[t];
    const float* g = grads + x.offset;
    float* out = first + x.first;
    if (!x.compressed) {
      std::memcpy(out, g, static_cast<std::size_t>(x.rows * x.cols) * sizeof(float));
      continue;
    }
    for (std::size_t i = 0; i < x.m.size(); ++i) x.m[i] += g[i];
    std::memset(out, 0, static_cast<std::size_t>(x.rows * r) * sizeof(float));
    for (std::int64_t i = 0; i < x.rows; ++i) {  // P = M Q
      const float* mi = x.m.data() + i * x.cols;
      float* pi = out + i * r;
      for (std::int64_t j = 0; j < x.cols; ++j) {
        const float* qj = x.q.data() + j * r;
        for (int k = 0; k < r; ++k) pi[k] += mi[j] * qj[k];
      }
    }
  }
}

void PowerSgd::second(std::size_t t0, std::size_t t1, float* first, float* second) {
  const int r = rank_;
  for (std::size_t t = t0; t < t1; ++t) {
    Tensor& x = tensors_[t];
    if (!x.compressed) continue;
    float* p = first + x.first;
    orthonormalise_columns(p, x.rows, r);
    std::fill(x.own_q.begin(), x.own_q.end(), 0.f);
    for (std::int64_t i = 0; i < x.rows; ++i) {  // Q = M^T P^
      const float* mi = x.m.data() + i * x.cols;
      const float* pi = p + i * r;
      for (std::int64_t j = 0; j < x.cols; ++j) {
        float* qj = x.own_q.data() + j * r;
        for (int k = 0; k < r; ++k) qj[k] += mi[j] * pi[k];
      }
    }
    std::memcpy(second + x.second, x.own_q.data(), x.own_q.size() * sizeof(float));
  }
}

void PowerSgd::finish(std::size_t t0, std::size_t t1, const float* first, const float* second,
                      int workers, float* sums) {
  const int r = rank_;
  const float mean = 1.f / static_cast<float>(workers);
  for (std::size_t t = t0; t < t1; ++t) {
    Tensor& x = tensors_[t];
    float* out = sums + x.offset;
    if (!x.compressed) {
      std::memcpy(out, first + x.first, static_cast<std::size_t>(x.rows * x.cols) * sizeof(float));
      continue;
    }
    const float* p = first + x.first;
    const float* q = second + x.second;
    for (std::int64_t i = 0; i < x.rows; ++i) {  // sums = P^ Q_sum^T, residual -= P^ Q_own^T
      const float* pi = p + i * r;
      float* mi = x.m.data() + i * x.cols;
      float* oi = out + i * x.cols;
      for (std::int64_t j = 0; j < x.cols; ++j) {
        const float* qj = q + j * r;
        const float* oj = x.own_q.data() + j * r;
        float sum = 0, own = 0;
        for (int k = 0; k < r; ++k) {
          sum += pi[k] * qj[k];
          own += pi[k] * oj[k];
        }
        oi[j] = sum;
        mi[j] -= own;
      }
    }
    for (std::size_t i = 0; i < x.q.size(); ++i) x.q[i] = q[i] * mean;
  }
}

std::string PowerSgd::state() const {
  std::string out;
  for (std::size_t t = 0; t < tensors_.size(); ++t)
    if (tensors_[t].compressed) put_atom_state(out, static_cast<std::int64_t>(t), {&tensors_[t].m});
  std::string warm;
  for (std::size_t t = 0; t < tensors_.size(); ++t)
    if (tensors_[t].compressed)
      put_atom_state(warm, static_cast<std::int64_t>(t), {&tensors_[t].q});
  return out + warm;
}

void PowerSgd::set_state(const std::string& state) {
  std::vector<std::vector<float>> m, q;
  std::size_t at = 0;
  for (auto* into : {&m, &q}) {
    for (std::size_t t = 0; t < tensors_.size(); ++t) {
      if (!tensors_[t].compressed) continue;
      std::vector<float> v;
      const std::int64_t index = take_atom_state(state, at, {&v}, "powersgd state");
      const std::size_t want = (into == &m ? tensors_[t].m : tensors_[t].q).size();
      if (index != static_cast<std::int64_t>(t) || v.size() != want)
        throw InvalidInput("powersgd state: tensor " + std::to_string(index) + " of " +
                           std::to_string(v.size()) + " values where tensor " + std::to_string(t) +
                           " of " + std::to_string(want) + " was expected");
      into->push_back(std::move(v));
    }
  }
  if (at != state.size())
    throw InvalidInput("powersgd state: " + std::to_string(state.size() - at) +
                       " bytes past its end");
  std::size_t k = 0;
  for (Tensor& x : tensors_) {
    if (!x.compressed) continue;
    x.m = std::move(m[k]);
    x.q = std::move(q[k]);
    ++k;
  }
}

}  // namespace dynacomm::compress

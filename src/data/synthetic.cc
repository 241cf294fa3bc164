#include "data/synthetic.h"

#include "base/error.h"

namespace dynacomm::data {

SyntheticSource::SyntheticSource(int channels, int height, int width, int classes,
                                 std::uint64_t seed)
    : channels_(channels), height_(height), width_(width), classes_(classes), rng_(seed) {
  if (channels < 1 || height < 1 || width < 1 || classes < 1)
    throw InvalidInput("synthetic data: shape and class count must be positive");
}

Batch SyntheticSource::next(int batch_size) {
  if (batch_size < 1) throw InvalidInput("synthetic data: batch size must be positive");
  Batch b;
  b.images.resize(static_cast<std::size_t>(batch_size) * channels_ * height_ * width_);
  std::normal_distribution<float> pixel(0.f, 1.f);
  for (float& x : b.images) x = pixel(rng_);
  std::uniform_int_distribution<int> label(0, classes_ - 1);
  for (int i = 0; i < batch_size; ++i) b.labels.push_back(label(rng_));
  return b;
}

}  // namespace dynacomm::data

// Random images and labels of any shape, for timing and profiling large models without
// a data set. Deterministic from the seed.
//
//   SyntheticSource src(3, 224, 224, 1000, /*seed=*/1);
//   Batch b = src.next(4);   // 4 x 3 x 224 x 224 floats ~ N(0, 1), labels in 0..999
#pragma once

#include <cstdint>
#include <random>

#include "data/fashion_mnist.h"

namespace dynacomm::data {

class SyntheticSource {
 public:
  // Throws InvalidInput for non-positive sizes.
  SyntheticSource(int channels, int height, int width, int classes, std::uint64_t seed);
  Batch next(int batch_size);

 private:
  int channels_, height_, width_, classes_;
  std::mt19937_64 rng_;
};

}  // namespace dynacomm::data

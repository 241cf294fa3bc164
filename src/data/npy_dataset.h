// The user's own data (--data-dir FOLDER) as NumPy arrays in one folder:
//
//   train_images.npy  N x C x H x W, uint8 (scaled to 0..1) or float32 (used as given)
//   train_labels.npy  N integers 0..K-1 (int64, int32 or uint8); K = the largest + 1, <= 256
//   test_images.npy   M x C x H x W, the same C, H, W and type
//   test_labels.npy   M integers 0..K-1
//
// The model is built for C x H x W inputs and K classes (a model that cannot take them
// says so). Every mismatch, bad file or out-of-range label throws InvalidInput naming the
// file and what to change.
//
//   Dataset train = load_dataset(dir, Split::kTrain);  // .npy folder or Fashion-MNIST IDX
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/fashion_mnist.h"

namespace dynacomm::data {

// Whether `dir` holds train_images.npy (then it is a .npy folder).
bool is_npy_dataset_dir(const std::string& dir);
// C x H x W of a .npy folder's images, from the header alone; InvalidInput as loading.
std::vector<std::int64_t> npy_image_shape(const std::string& dir);

// Either kind: the .npy folder, else Fashion-MNIST's IDX files ("" = Debian's package).
// check_dataset_dir reads only the headers: a cheap check before any process starts.
void check_dataset_dir(const std::string& dir);
Dataset load_dataset(const std::string& dir, Split split);

}  // namespace dynacomm::data

// IDX files (the MNIST family's format), plain or gzip-compressed.
//
//   IdxArray a = read_idx("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz",
//                         0x0803);
//   a.dims == {10000, 28, 28}; a.data.size() == 10000 * 28 * 28
//
// Only unsigned-byte IDX data (type 0x08) is supported, which is what the MNIST family
// uses. Every problem (missing file, bad gzip stream, wrong magic, a count that does not
// match the data, trailing bytes) throws InvalidInput naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dynacomm::data {

struct IdxArray {
  std::vector<std::int64_t> dims;
  std::vector<std::uint8_t> data;
};

// `expected_magic`: 0x0801 for a 1-d (labels) file, 0x0803 for 3-d (images).
IdxArray read_idx(const std::string& path, std::uint32_t expected_magic);

}  // namespace dynacomm::data

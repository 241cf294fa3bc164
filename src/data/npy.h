// NumPy .npy files (format versions 1.0-3.0, C order), the arrays users bring their data in:
// images N x C x H x W as uint8 or float32, labels N as an integer type.
//
//   NpyArray a = read_npy("data/train_images.npy");
//   a.dtype == NpyType::kFloat32; a.shape == {60000, 1, 28, 28}; a.bytes.size() == N*C*H*W*4
//
// Every problem (missing file, bad magic, an unreadable header, Fortran order, a type other
// than those below, data shorter or longer than the shape says) throws InvalidInput naming
// the file. Only little-endian data is read (what NumPy writes on this machine).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dynacomm::data {

enum class NpyType { kUint8, kFloat32, kInt32, kInt64 };

struct NpyArray {
  NpyType dtype = NpyType::kUint8;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;  // the elements, little-endian, C order

  std::int64_t count() const;  // elements: the product of the shape
  // Element i as an integer (integer types), for labels.
  std::int64_t integer(std::int64_t i) const;
};

// The header alone (bytes left empty): cheap, for checking shapes.
NpyArray read_npy_header(const std::string& path);
NpyArray read_npy(const std::string& path);

// Writes `a` as a version 1.0 .npy file (tests, and data a user prepares). Throws Error
// naming the file when it cannot be written.
void write_npy(const std::string& path, const NpyArray& a);

}  // namespace dynacomm::data

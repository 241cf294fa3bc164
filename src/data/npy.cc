#include "data/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace dynacomm::data {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::int64_t kMaxHeader = 1 << 20;

int width(NpyType t) {
  switch (t) {
    case NpyType::kUint8:
      return 1;
    case NpyType::kFloat32:
    case NpyType::kInt32:
      return 4;
    case NpyType::kInt64:
      return 8;
  }
  return 1;
}

const char* descr(NpyType t) {
  switch (t) {
    case NpyType::kUint8:
      return "|u1";
    case NpyType::kFloat32:
      return "<f4";
    case NpyType::kInt32:
      return "<i4";
    case NpyType::kInt64:
      return "<i8";
  }
  return "";
}

// The value of 'key' in the header's dict, as its text up to the next top-level comma.
std::string field(const std::string& header, const std::string& key, const std::string& path) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) throw InvalidInput(path + ": .npy header has no '" + key + "'");
  auto colon = header.find(':', k);
  if (colon == std::string::npos) throw InvalidInput(path + ": .npy header is malformed");
  std::size_t end = colon + 1;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if ((c == ',' && depth == 0) || (c == '}' && depth == 0)) break;
  }
  std::string v = header.substr(colon + 1, end - colon - 1);
  v.erase(0, v.find_first_not_of(" \t"));
  v.erase(v.find_last_not_of(" \t") + 1);
  return v;
}

NpyType parse_type(const std::string& d, const std::string& path) {
  for (NpyType t : {NpyType::kUint8, NpyType::kFloat32, NpyType::kInt32, NpyType::kInt64})
    if (d == std::string("'") + descr(t) + "'") return t;
  if (d == "'<u1'") return NpyType::kUint8;
  throw InvalidInput(path + ": .npy type " + d +
                     " is not supported (uint8 or float32 images, int32/int64/uint8 labels; "
                     "save with array.astype(...))");
}

std::vector<std::int64_t> parse_shape(const std::string& s, const std::string& path) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')')
    throw InvalidInput(path + ": .npy shape '" + s + "' is malformed");
  std::vector<std::int64_t> shape;
  std::stringstream in(s.substr(1, s.size() - 2));
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(" "));
    item.erase(item.find_last_not_of(" ") + 1);
    if (item.empty()) continue;  // (N,)
    if (item.find_first_not_of("0123456789") != std::string::npos || item.size() > 12)
      throw InvalidInput(path + ": .npy shape '" + s + "' is malformed");
    shape.push_back(std::stoll(item));
  }
  return shape;
}

// Reads the header; leaves `in` at the data.
NpyArray header_of(std::ifstream& in, const std::string& path) {
  if (!in) throw InvalidInput(path + ": cannot open");
  char magic[8] = {};
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 6) != 0)
    throw InvalidInput(path + ": not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(magic[6]);
  if (major < 1 || major > 3)
    throw InvalidInput(path + ": .npy format version " + std::to_string(major) +
                       " is not supported");
  unsigned char len[4] = {};
  const int len_bytes = major == 1 ? 2 : 4;
  if (!in.read(reinterpret_cast<char*>(len), len_bytes))
    throw InvalidInput(path + ": .npy header is truncated");
  std::int64_t n = len[0] | (len[1] << 8);
  if (len_bytes == 4)
    n |= (static_cast<std::int64_t>(len[2]) << 16) | (static_cast<std::int64_t>(len[3]) << 24);
  if (n <= 0 || n > kMaxHeader) throw InvalidInput(path + ": .npy header length is implausible");
  std::string header(static_cast<std::size_t>(n), '\0');
  if (!in.read(header.data(), n)) throw InvalidInput(path + ": .npy header is truncated");
  if (field(header, "fortran_order", path) != "False")
    throw InvalidInput(path + ": .npy data is in Fortran order; save np.ascontiguousarray(a)");
  NpyArray a;
  a.dtype = parse_type(field(header, "descr", path), path);
  a.shape = parse_shape(field(header, "shape", path), path);
  return a;
}

}  // namespace

std::int64_t NpyArray::count() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::int64_t NpyArray::integer(std::int64_t i) const {
  const std::uint8_t* p = bytes.data() + i * width(dtype);
  switch (dtype) {
    case NpyType::kUint8:
      return *p;
    case NpyType::kInt32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case NpyType::kInt64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case NpyType::kFloat32:
      break;
  }
  throw InvalidInput("an .npy array of float32 where integers (labels) are needed");
}

NpyArray read_npy_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return header_of(in, path);
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  NpyArray a = header_of(in, path);
  const std::int64_t count = a.count();
  if (count < 0 || count > (std::int64_t{1} << 36))
    throw InvalidInput(path + ": .npy shape is implausibly large");
  const std::int64_t want = count * width(a.dtype);
  const auto here = in.tellg();
  in.seekg(0, std::ios::end);
  const std::int64_t have = static_cast<std::int64_t>(in.tellg() - here);
  if (have != want)
    throw InvalidInput(path + ": .npy data is " + std::to_string(have) + " bytes, its shape says " +
                       std::to_string(want) + (have < want ? " (truncated)" : " (trailing bytes)"));
  in.seekg(here);
  a.bytes.resize(static_cast<std::size_t>(want));
  if (!in.read(reinterpret_cast<char*>(a.bytes.data()), want))
    throw InvalidInput(path + ": .npy data could not be read");
  return a;
}

void write_npy(const std::string& path, const NpyArray& a) {
  std::string shape = "(";
  for (std::int64_t d : a.shape) shape += std::to_string(d) + ", ";
  if (a.shape.size() > 1) shape.resize(shape.size() - 2);
  shape += ")";
  std::string header = std::string("{'descr': '") + descr(a.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const std::uint16_t n = static_cast<std::uint16_t>(header.size());
  const char version[2] = {1, 0};
  out.write(kMagic, 6);
  out.write(version, 2);
  const char len[2] = {static_cast<char>(n & 0xff), static_cast<char>(n >> 8)};
  out.write(len, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(a.bytes.data()),
            static_cast<std::streamsize>(a.bytes.size()));
  if (!out) throw Error(path + ": cannot write");
}

}  // namespace dynacomm::data

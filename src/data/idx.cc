#include "data/idx.h"

#include <zlib.h>

#include <cstdio>
#include <memory>

#include "base/error.h"

namespace dynacomm::data {

namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

std::string gz_error(gzFile f) {
  int code = 0;
  const char* msg = gzerror(f, &code);
  return code == Z_ERRNO ? "read error" : (msg && *msg ? msg : "unknown error");
}

// Reads exactly n bytes; false on a clean end of data before n, throws on a bad stream.
bool read_exact(gzFile f, void* out, std::size_t n, const std::string& path) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    unsigned chunk = n > (1u << 30) ? (1u << 30) : static_cast<unsigned>(n);
    int got = gzread(f, p, chunk);
    if (got < 0) throw InvalidInput(path + ": corrupt gzip data (" + gz_error(f) + ")");
    if (got == 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

std::uint32_t big_endian(const unsigned char* b) {
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
         std::uint32_t{b[3]};
}

}  // namespace

IdxArray read_idx(const std::string& path, std::uint32_t expected_magic) {
  std::FILE* probe = std::fopen(path.c_str(), "rb");
  if (!probe) throw InvalidInput(path + ": cannot open IDX file");
  std::fclose(probe);
  GzFile f(gzopen(path.c_str(), "rb"));  // reads plain files transparently too
  if (!f) throw InvalidInput(path + ": cannot open IDX file");

  unsigned char header[4];
  if (!read_exact(f.get(), header, 4, path)) throw InvalidInput(path + ": truncated IDX header");
  const std::uint32_t magic = big_endian(header);
  if (magic != expected_magic) {
    char buf[128];
    std::snprintf(buf, sizeof buf, ": wrong magic number 0x%08x, expected 0x%08x", magic,
                  expected_magic);
    throw InvalidInput(path + buf);
  }
  const int ndims = header[3];
  IdxArray a;
  std::int64_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    unsigned char b[4];
    if (!read_exact(f.get(), b, 4, path)) throw InvalidInput(path + ": truncated IDX header");
    std::int64_t n = big_endian(b);
    if (n == 0 || n > (1 << 28))
      throw InvalidInput(path + ": implausible dimension " + std::to_string(n));
    a.dims.push_back(n);
    total *= n;
    if (total > (std::int64_t{1} << 34)) throw InvalidInput(path + ": IDX array too large");
  }
  a.data.resize(static_cast<std::size_t>(total));
  if (!read_exact(f.get(), a.data.data(), a.data.size(), path))
    throw InvalidInput(path + ": truncated: header promises " + std::to_string(total) +
                       " bytes of data");
  char extra;
  if (read_exact(f.get(), &extra, 1, path))
    throw InvalidInput(path + ": trailing bytes after " + std::to_string(total) + " bytes of data");
  return a;
}

}  // namespace dynacomm::data

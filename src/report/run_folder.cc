#include "report/run_folder.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace dynacomm::report {

namespace {

void make_dirs(const std::string& path) {
  std::string partial;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/') partial = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    partial += part + "/";
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error(path + ": cannot create run folder: " + std::strerror(errno));
  }
}

void write_atomically(const std::string& path, const void* data, std::size_t size) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw Error(path + ": cannot write: " + std::strerror(errno));
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) throw Error(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(path + ": cannot rename into place: " + std::strerror(errno));
}

}  // namespace

RunFolder::RunFolder(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw InvalidInput("run folder: empty path");
  make_dirs(path_);
}

void RunFolder::write_text(const std::string& name, const std::string& text) const {
  write_atomically(file(name), text.data(), text.size());
}

void RunFolder::write_json(const std::string& name, const nlohmann::json& j) const {
  write_text(name, j.dump(2) + "\n");
}

void RunFolder::write_csv(const std::string& name, const std::vector<std::string>& header,
                          const std::vector<std::vector<double>>& rows) const {
  std::ostringstream os;
  os.precision(10);
  for (std::size_t i = 0; i < header.size(); ++i) os << (i ? "," : "") << header[i];
  os << "\n";
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) os << (i ? "," : "") << row[i];
    os << "\n";
  }
  write_text(name, os.str());
}

void RunFolder::write_csv(const std::string& name, const std::vector<std::string>& header,
                          const std::vector<std::vector<std::string>>& rows) const {
  auto cell = [](const std::string& c) {
    if (c.find_first_of(",\"\r\n") == std::string::npos) return c;
    std::string q = "\"";
    for (char ch : c) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  std::ostringstream os;
  for (std::size_t i = 0; i < header.size(); ++i) os << (i ? "," : "") << cell(header[i]);
  os << "\n";
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) os << (i ? "," : "") << cell(row[i]);
    os << "\n";
  }
  write_text(name, os.str());
}

void RunFolder::write_floats(const std::string& name, const std::vector<float>& values) const {
  static_assert(sizeof(float) == 4, "float32 expected");
  const std::uint16_t probe = 1;
  if (*reinterpret_cast<const std::uint8_t*>(&probe) != 1)
    throw Error("weights.bin is little-endian; big-endian hosts are not supported");
  write_atomically(file(name), values.data(), values.size() * sizeof(float));
}

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InvalidInput(path + ": cannot open");
  const std::streamoff size = in.tellg();
  if (size % 4 != 0) throw InvalidInput(path + ": size is not a multiple of 4 bytes");
  std::vector<float> v(static_cast<std::size_t>(size / 4));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), size);
  if (!in) throw InvalidInput(path + ": read failed");
  return v;
}

}  // namespace dynacomm::report

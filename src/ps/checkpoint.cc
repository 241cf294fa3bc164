#include "ps/checkpoint.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "net/wire.h"

namespace dynacomm::ps {

namespace {

constexpr char kMagic[8] = {'D', 'Y', 'N', 'C', 'K', 'P', 'T', '1'};
constexpr std::uint64_t kMaxHeadBytes = 64 << 20;

std::string file_name(std::int64_t iteration) {
  char name[40];
  std::snprintf(name, sizeof name, "ckpt-%012lld.bin", static_cast<long long>(iteration));
  return name;
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void append_floats(std::string& out, const std::vector<float>& v) {
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::string encode(const Checkpoint& c) {
  nlohmann::json units = nlohmann::json::array();
  for (const auto& u : c.units)
    units.push_back({{"floats", u.params.size()},
                     {"version", u.version},
                     {"started", u.started},
                     {"public", !u.public_copy.empty()}});
  const std::string head = nlohmann::json{
      {"iteration", c.iteration},
      {"hello", net::encode(c.job)},
      {"settings", net::encode(c.settings)},
      {"units", units}}.dump();
  std::string out(kMagic, sizeof kMagic);
  put_u64(out, head.size());
  out += head;
  for (const auto& u : c.units) {
    append_floats(out, u.params);
    append_floats(out, u.velocity);
    append_floats(out, u.public_copy);
  }
  const std::uint32_t crc = net::crc32(out.data(), out.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return out;
}

// The parsed head's units, checked against the bytes that follow it.
std::vector<ParameterStore::UnitState> decode_units(const nlohmann::json& units, const char* p,
                                                    std::size_t bytes) {
  if (!units.is_array()) throw InvalidInput("no unit list");
  std::vector<ParameterStore::UnitState> out;
  std::size_t need = 0;
  for (const auto& u : units) {
    if (!u.is_object() || !u.contains("floats") || !u["floats"].is_number_unsigned() ||
        !u.contains("version") || !u["version"].is_number_integer() || !u.contains("started") ||
        !u["started"].is_boolean())
      throw InvalidInput("unit " + std::to_string(out.size()) + " is malformed");
    const auto n = u["floats"].get<std::uint64_t>();
    // A checkpoint of a job with compressed pulls holds the public copy too.
    const bool with_public =
        u.contains("public") && u["public"].is_boolean() && u["public"].get<bool>() && n > 0;
    const std::uint64_t vectors = with_public ? 3 : 2;
    if (n > (bytes - need) / (vectors * sizeof(float)))
      throw InvalidInput("unit " + std::to_string(out.size()) + " runs past the end (truncated?)");
    need += vectors * n * sizeof(float);
    ParameterStore::UnitState s;
    s.version = u["version"].get<std::int64_t>();
    s.started = u["started"].get<bool>();
    for (std::vector<float>* v : {&s.params, &s.velocity, &s.public_copy}) {
      if (v == &s.public_copy && !with_public) break;
      v->resize(n);
      std::memcpy(v->data(), p, n * sizeof(float));
      p += n * sizeof(float);
    }
    out.push_back(std::move(s));
  }
  if (need != bytes)
    throw InvalidInput(std::to_string(bytes - need) + " bytes after the last unit");
  return out;
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::vector<float> Checkpoint::flat_params() const {
  std::vector<float> flat;
  for (const auto& u : units) flat.insert(flat.end(), u.params.begin(), u.params.end());
  return flat;
}

void make_checkpoint_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InvalidInput("checkpoint folder " + dir + ": " +
                       (ec ? ec.message() : std::string("not a folder")));
}

std::string write_checkpoint(const std::string& dir, const Checkpoint& c, int keep) {
  const std::string bytes = encode(c);
  const std::string path = dir + "/" + file_name(c.iteration), tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) throw Error("checkpoint: cannot write " + tmp + ": " + std::strerror(errno));
  }
  fsync_path(tmp, O_RDONLY);
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error("checkpoint: cannot rename " + tmp + ": " + std::strerror(errno));
  fsync_path(dir, O_RDONLY | O_DIRECTORY);
  const std::vector<std::string> files = checkpoint_files(dir);
  for (std::size_t i = static_cast<std::size_t>(std::max(1, keep)); i < files.size(); ++i)
    std::remove(files[i].c_str());
  return path;
}

Checkpoint read_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput("checkpoint " + path + ": cannot open it");
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto bad = [&](const std::string& why) {
    return InvalidInput("checkpoint " + path + ": " + why);
  };
  if (b.size() < sizeof kMagic + 12 || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    throw bad("not a dynacomm checkpoint (or truncated to " + std::to_string(b.size()) + " bytes)");
  std::uint32_t crc = 0;
  for (int i = 3; i >= 0; --i) crc = (crc << 8) | static_cast<unsigned char>(b[b.size() - 4 + i]);
  if (net::crc32(b.data(), b.size() - 4) != crc)
    throw bad("checksum mismatch (truncated or corrupt, " + std::to_string(b.size()) + " bytes)");
  const std::uint64_t head_bytes = get_u64(b.data() + sizeof kMagic);
  const std::size_t body = b.size() - 4 - sizeof kMagic - 8;
  if (head_bytes > kMaxHeadBytes || head_bytes > body) throw bad("head runs past the end");
  const char* head = b.data() + sizeof kMagic + 8;
  const nlohmann::json j = nlohmann::json::parse(head, head + head_bytes, nullptr, false);
  try {
    if (j.is_discarded() || !j.is_object() || !j.contains("iteration") ||
        !j["iteration"].is_number_integer() || !j.contains("hello") || !j["hello"].is_string() ||
        !j.contains("settings") || !j["settings"].is_string() || !j.contains("units"))
      throw InvalidInput("malformed head");
    Checkpoint c;
    c.iteration = j["iteration"].get<std::int64_t>();
    const std::string hello = j["hello"].get<std::string>(), s = j["settings"].get<std::string>();
    c.job = net::decode_hello(hello.data(), hello.size());
    c.settings = net::decode_job_config(s.data(), s.size());
    c.units = decode_units(j["units"], head + head_bytes, body - head_bytes);
    if (c.units.size() != c.job.unit_bytes.size()) throw InvalidInput("unit count differs");
    for (std::size_t u = 0; u < c.units.size(); ++u)
      if (c.units[u].params.size() * 4 != static_cast<std::size_t>(c.job.unit_bytes[u]) ||
          c.units[u].version != c.iteration)
        throw InvalidInput("unit " + std::to_string(u) + " does not fit the job's layout");
    return c;
  } catch (const InvalidInput& e) {
    throw bad(e.what());
  }
}

std::vector<std::string> checkpoint_files(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() == 21 && n.rfind("ckpt-", 0) == 0 && n.substr(17) == ".bin") names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.rbegin(), names.rend());  // zero-padded: newest first
  for (auto& n : names) n = dir + "/" + n;
  return names;
}

Checkpoint load_latest(const std::string& dir,
                       const std::function<std::string(const Checkpoint&)>& check,
                       const std::function<void(const std::string&)>& log) {
  std::string refused;
  for (const std::string& path : checkpoint_files(dir)) {
    std::string why;
    try {
      Checkpoint c = read_checkpoint(path);
      why = check ? check(c) : "";
      if (why.empty()) return c;
      why = "checkpoint " + path + ": " + why;
    } catch (const InvalidInput& e) {
      why = e.what();
    }
    if (log) log(why + "; trying the one before");
    refused += "\n  " + why;
  }
  throw InvalidInput("no usable checkpoint in " + dir + (refused.empty() ? " (none there)" : ":") +
                     refused);
}

}  // namespace dynacomm::ps

#include "worker/codec_state.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/error.h"
#include "worker/comm.h"

namespace dynacomm::worker {

namespace {
constexpr char kMagic[4] = {'D', 'C', 'S', 'T'};
constexpr std::uint32_t kVersion = 1;

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T>
T take(const std::string& in, std::size_t& at, const std::string& path) {
  T v;
  if (in.size() - at < sizeof v) throw InvalidInput(path + ": truncated");
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}
std::string take_bytes(const std::string& in, std::size_t& at, std::uint64_t n,
                       const std::string& path) {
  if (n > in.size() - at) throw InvalidInput(path + ": truncated");
  std::string out = in.substr(at, n);
  at += n;
  return out;
}
}  // namespace

std::string codec_state_path(const std::string& out_dir, int rank) {
  return out_dir + "/codec-state-worker" + std::to_string(rank) + ".bin";
}

void save_codec_state(const std::string& path, const std::string& spec,
                      std::int64_t next_iteration, const std::string& state) {
  std::string out(kMagic, sizeof kMagic);
  put(out, kVersion);
  put(out, next_iteration);
  put(out, static_cast<std::uint32_t>(spec.size()));
  out += spec;
  put(out, static_cast<std::uint64_t>(state.size()));
  out += state;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!f) throw Error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error("cannot rename " + tmp);
}

SavedCodecState load_codec_state(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InvalidInput(path + ": cannot be opened");
  const std::string in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t at = 0;
  if (in.size() < sizeof kMagic || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0)
    throw InvalidInput(path + ": not a codec state file");
  at = sizeof kMagic;
  if (const auto v = take<std::uint32_t>(in, at, path); v != kVersion)
    throw InvalidInput(path + ": version " + std::to_string(v) + ", expected " +
                       std::to_string(kVersion));
  SavedCodecState s;
  s.next_iteration = take<std::int64_t>(in, at, path);
  s.spec = take_bytes(in, at, take<std::uint32_t>(in, at, path), path);
  s.state = take_bytes(in, at, take<std::uint64_t>(in, at, path), path);
  if (at != in.size()) throw InvalidInput(path + ": " + std::to_string(in.size() - at) +
                                          " bytes past its end");
  return s;
}

void restore_codec_state(const std::string& path, const std::string& spec, std::int64_t first,
                         int rank, Comm& comm, std::ostream& progress) {
  if (path.empty() || !std::ifstream(path)) return;
  const std::string who = "worker " + std::to_string(rank) + ": ";
  try {
    const SavedCodecState s = load_codec_state(path);
    if (s.spec != spec || s.next_iteration != first) {
      progress << who << "the compression state in " << path << " is for --compress " << s.spec
               << " at iteration " << s.next_iteration << ", not " << spec << " at " << first
               << ": starting without it\n";
      return;
    }
    comm.set_codec_state(s.state);
    progress << who << "took up the compression state (residuals) it had before iteration "
             << first << "\n";
  } catch (const InvalidInput& e) {
    progress << who << "cannot use " << path << " (" << e.what() << "): starting without it\n";
  }
}

}  // namespace dynacomm::worker

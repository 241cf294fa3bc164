#include "worker/codec_state.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/error.h"

namespace dynacomm::worker {

namespace {
constexpr char kMagic[4] = {'D', 'C', 'S', 'T'};
constexpr std::uint32_t kVersion = 2;

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

void save_codec_state(const std::string& path, const SavedCodecState& saved) {
  std::string out(kMagic, sizeof kMagic);
  put(out, kVersion);
  put(out, static_cast<std::uint32_t>(saved.spec.size()));
  out += saved.spec;
  put(out, static_cast<std::uint32_t>(saved.states.size()));
  for (const SavedCodecState::At& a : saved.states) {
    put(out, a.next_iteration);
    put(out, static_cast<std::uint64_t>(a.state.size()));
    out += a.state;
  }
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
  const auto version = take<std::uint32_t>(in, at, path);
  if (version != 1 && version != kVersion)
    throw InvalidInput(path + ": version " + std::to_string(version) + ", expected " +
                       std::to_string(kVersion));
  SavedCodecState s;
  if (version == 1) {
    SavedCodecState::At a;
    a.next_iteration = take<std::int64_t>(in, at, path);
    s.spec = take_bytes(in, at, take<std::uint32_t>(in, at, path), path);
    a.state = take_bytes(in, at, take<std::uint64_t>(in, at, path), path);
    s.states.push_back(std::move(a));
  } else {
    s.spec = take_bytes(in, at, take<std::uint32_t>(in, at, path), path);
    const auto n = take<std::uint32_t>(in, at, path);
    for (std::uint32_t i = 0; i < n; ++i) {
      SavedCodecState::At a;
      a.next_iteration = take<std::int64_t>(in, at, path);
      a.state = take_bytes(in, at, take<std::uint64_t>(in, at, path), path);
      s.states.push_back(std::move(a));
    }
  }
  if (at != in.size()) throw InvalidInput(path + ": " + std::to_string(in.size() - at) +
                                          " bytes past its end");
  return s;
}

std::optional<std::string> codec_state_for(const std::string& path, const std::string& spec,
                                           std::int64_t first, int rank, std::ostream& progress) {
  if (path.empty() || !std::ifstream(path)) return std::nullopt;
  const std::string who = "worker " + std::to_string(rank) + ": ";
  try {
    const SavedCodecState s = load_codec_state(path);
    const auto at =
        std::find_if(s.states.begin(), s.states.end(),
                     [&](const SavedCodecState::At& a) { return a.next_iteration == first; });
    if (s.spec != spec || at == s.states.end()) {
      std::string iterations;
      for (const SavedCodecState::At& a : s.states)
        iterations += (iterations.empty() ? "" : " or ") + std::to_string(a.next_iteration);
      progress << who << "the compression state in " << path << " is for --compress " << s.spec
               << " at iteration " << (iterations.empty() ? "none" : iterations) << ", not " << spec
               << " at " << first << ": starting without it\n";
      return std::nullopt;
    }
    progress << who << "took up the compression state (residuals) it had before iteration "
             << first << "\n";
    return at->state;
  } catch (const InvalidInput& e) {
    progress << who << "cannot use " << path << " (" << e.what() << "): starting without it\n";
  }
  return std::nullopt;
}

}  // namespace dynacomm::worker

#include "cluster/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace dynacomm::cluster {

namespace {

std::string find_tool(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    const std::string p = dir + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

struct Output {
  int status = -1;
  std::string text;  // stdout + stderr
};

// Runs a tool (no shell), capturing its output. Never throws.
Output run_tool(const std::vector<std::string>& argv) {
  Output out;
  const std::string exe = find_tool(argv[0]);
  if (exe.empty()) {
    out.text = argv[0] + ": not found";
    return out;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {  // not inherited by what other threads spawn
    out.text = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.text = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(exe.c_str(), args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  pid_t waited;
  while ((waited = ::waitpid(pid, &out.status, 0)) < 0 && errno == EINTR) {
  }
  if (waited != pid) {
    out.status = -1;
    out.text += std::string("(its exit status was lost: waitpid: ") + std::strerror(errno) + ")";
  }
  return out;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

void must(const std::vector<std::string>& argv) {
  Output o = run_tool(argv);
  if (!(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0)) {
    while (!o.text.empty() && o.text.back() == '\n') o.text.pop_back();
    throw Error("netns set-up: `" + joined(argv) + "` failed: " + o.text);
  }
}

std::string rate_arg(double bps) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0fbit", bps);
  return b;
}

// "dc1f2e3-ps" -> 0x1f2e3; -1 when the name is not ours.
long owner_pid(const std::string& name) {
  if (name.size() < 4 || name.compare(0, 2, "dc") != 0) return -1;
  std::size_t end = 2;
  while (end < name.size() && std::isxdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == 2 || end > 10) return -1;
  const std::string rest = name.substr(end);
  const bool ours = rest == "-ps" || rest.rfind("-w", 0) == 0 || rest.rfind("p", 0) == 0 ||
                    rest.rfind("w", 0) == 0;
  return ours ? std::stol(name.substr(2, end - 2), nullptr, 16) : -1;
}

bool alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

}  // namespace

std::vector<std::string> tbf_args(double bps) {
  // burst: at least one 64 KiB GSO segment plus a frame, or 4 ms at line rate for fast
  // links; queue: 100 ms of data, enough for TCP not to lose packets at these rates.
  const double burst = std::max(70000.0, bps / 8 / 250);
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", burst);
  return {"tbf", "rate", rate_arg(bps), "burst", b, "latency", "100ms"};
}

std::string NetnsTopology::unavailable_reason() {
  if (::geteuid() != 0)
    return "--net netns needs root: it creates network namespaces, veth links and tbf qdiscs "
           "(the default, --net user, shapes links in user space and needs nothing)";
  if (find_tool("ip").empty() || find_tool("tc").empty())
    return "--net netns needs `ip` and `tc` (Debian package iproute2)";
  if (::access("/proc/self/ns/net", R_OK) != 0) return "this kernel has no network namespaces";
  return "";
}

std::string NetnsTopology::congestion_control() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_congestion_control");
  std::string name;
  in >> name;
  return name;
}

int NetnsTopology::clean_leftovers() {
  int removed = 0;
  std::istringstream ns(run_tool({"ip", "netns", "list"}).text);
  for (std::string line; std::getline(ns, line);) {
    const std::string name = line.substr(0, line.find(' '));
    const long pid = owner_pid(name);
    if (pid > 0 && !alive(pid)) {
      run_tool({"ip", "netns", "delete", name});
      ++removed;
    }
  }
  // A veth pair made but not yet moved into its namespaces when a run died.
  std::istringstream links(run_tool({"ip", "-o", "link", "show"}).text);
  for (std::string line; std::getline(links, line);) {
    // "12: dc1f2e3p0@dc1f2e3w0: <...>"
    const auto colon = line.find(": ");
    if (colon == std::string::npos) continue;
    std::string name = line.substr(colon + 2);
    name = name.substr(0, name.find_first_of("@:"));
    const long pid = owner_pid(name);
    if (pid > 0 && !alive(pid)) {
      run_tool({"ip", "link", "delete", name});
      ++removed;
    }
  }
  return removed;
}

NetnsTopology::NetnsTopology(int workers, const std::vector<EdgeLinkRates>& rates,
                             const CloudLinkRates& cloud)
    : workers_(workers) {
  if (const std::string why = unavailable_reason(); !why.empty()) throw Error(why);
  if (workers < 1 || workers > 250 || rates.size() != static_cast<std::size_t>(workers))
    throw InvalidInput("netns: 1..250 workers, one link rate pair each");
  for (const auto& r : rates)
    if (!(r.down_bps > 0) || !(r.up_bps > 0) || !std::isfinite(r.down_bps) ||
        !std::isfinite(r.up_bps))
      throw InvalidInput("netns: link rates must be positive");
  if (!(cloud.in_bps >= 0) || !(cloud.out_bps >= 0) || !std::isfinite(cloud.in_bps) ||
      !std::isfinite(cloud.out_bps))
    throw InvalidInput("netns: the cloud link's rates must be positive (0: unlimited)");
  char p[16];
  std::snprintf(p, sizeof p, "dc%x", static_cast<unsigned>(::getpid()));
  prefix_ = p;
  clean_leftovers();
  try {
    const std::string ps = ps_namespace();
    must({"ip", "netns", "add", ps});
    created_.push_back(ps);
    must({"ip", "-n", ps, "link", "set", "lo", "up"});
    for (int r = 0; r < workers; ++r) {
      const std::string w = worker_namespace(r);
      const std::string pv = prefix_ + "p" + std::to_string(r),
                        wv = prefix_ + "w" + std::to_string(r);
      must({"ip", "netns", "add", w});
      created_.push_back(w);
      must({"ip", "-n", w, "link", "set", "lo", "up"});
      must({"ip", "link", "add", pv, "type", "veth", "peer", "name", wv});
      must({"ip", "link", "set", pv, "netns", ps});
      must({"ip", "link", "set", wv, "netns", w});
      must({"ip", "-n", ps, "addr", "add", ps_address(r) + "/30", "dev", pv});
      must({"ip", "-n", w, "addr", "add", worker_address(r) + "/30", "dev", wv});
      must({"ip", "-n", ps, "link", "set", pv, "up"});
      must({"ip", "-n", w, "link", "set", wv, "up"});
      std::vector<std::string> down = {"tc", "-n", ps, "qdisc", "add", "dev", pv, "root"};
      std::vector<std::string> up = {"tc", "-n", w, "qdisc", "add", "dev", wv, "root"};
      for (const auto& a : tbf_args(rates[static_cast<std::size_t>(r)].down_bps)) down.push_back(a);
      for (const auto& a : tbf_args(rates[static_cast<std::size_t>(r)].up_bps)) up.push_back(a);
      must(down);
      must(up);
      // Workers reach each other through the PS namespace (peers such as DDP's ring).
      must({"ip", "-n", w, "route", "add", "default", "via", ps_address(r)});
    }
    must({"ip", "netns", "exec", ps, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"});
    if (cloud.limited()) add_cloud(cloud);
  } catch (...) {
    destroy();
    // A veth made but not moved yet lives in the root namespace.
    for (int r = 0; r < workers; ++r) run_tool({"ip", "link", "delete", prefix_ + "p" + std::to_string(r)});
    run_tool({"ip", "link", "delete", prefix_ + "c"});
    throw;
  }
}

// The PS's namespace behind one shaped veth pair from the switch: "c" at the switch (its
// egress: into the PS), "s" at the PS (its egress: out of the PS).
void NetnsTopology::add_cloud(const CloudLinkRates& cloud) {
  const std::string sw = ps_namespace(), server = prefix_ + "-cloud";
  const std::string cv = prefix_ + "c", sv = prefix_ + "s";
  must({"ip", "netns", "add", server});
  created_.push_back(server);
  cloud_ = true;
  must({"ip", "-n", server, "link", "set", "lo", "up"});
  must({"ip", "link", "add", cv, "type", "veth", "peer", "name", sv});
  must({"ip", "link", "set", cv, "netns", sw});
  must({"ip", "link", "set", sv, "netns", server});
  must({"ip", "-n", sw, "addr", "add", "10.213.255.1/30", "dev", cv});
  must({"ip", "-n", server, "addr", "add", std::string(kCloudAddress) + "/30", "dev", sv});
  must({"ip", "-n", sw, "link", "set", cv, "up"});
  must({"ip", "-n", server, "link", "set", sv, "up"});
  auto shape = [&](const std::string& ns, const std::string& dev, double bps) {
    if (bps <= 0) return;
    std::vector<std::string> tc = {"tc", "-n", ns, "qdisc", "add", "dev", dev, "root"};
    for (const auto& a : tbf_args(bps)) tc.push_back(a);
    must(tc);
  };
  shape(sw, cv, cloud.in_bps);
  shape(server, sv, cloud.out_bps);
  must({"ip", "-n", server, "route", "add", "default", "via", "10.213.255.1"});
}

NetnsTopology::~NetnsTopology() { destroy(); }

void NetnsTopology::destroy() noexcept {
  try {
    // Deleting a namespace deletes the veth ends in it, and with them their peers and qdiscs.
    for (auto it = created_.rbegin(); it != created_.rend(); ++it)
      run_tool({"ip", "netns", "delete", *it});
    created_.clear();
  } catch (...) {
  }
}

void NetnsTopology::set_rates(int rank, double down_bps, double up_bps) {
  if (rank < 0 || rank >= workers_) throw InvalidInput("netns: no worker " + std::to_string(rank));
  const std::string r = std::to_string(rank);
  std::vector<std::string> down = {"tc", "-n", ps_namespace(), "qdisc", "change", "dev",
                                   prefix_ + "p" + r, "root"};
  std::vector<std::string> up = {"tc", "-n", worker_namespace(rank), "qdisc", "change", "dev",
                                 prefix_ + "w" + r, "root"};
  for (const auto& a : tbf_args(down_bps)) down.push_back(a);
  for (const auto& a : tbf_args(up_bps)) up.push_back(a);
  must(down);
  must(up);
}

void enter_namespace(const std::string& name) {
  const std::string path = "/var/run/netns/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open network namespace " + path + ": " + std::strerror(errno));
  const int rc = ::setns(fd, CLONE_NEWNET);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw Error("cannot enter network namespace " + name + ": " + std::strerror(err));
}

}  // namespace dynacomm::cluster

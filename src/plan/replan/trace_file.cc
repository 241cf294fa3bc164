#include "plan/replan/trace_file.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "plan/model/quantity.h"

namespace dynacomm::plan {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) out.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

// Reads the header and the rows; calls row(cells, where) for each data row.
template <typename Row>
void read_csv(std::istream& in, const std::string& source, const std::vector<std::string>& columns,
              Row row) {
  if (!in) throw InvalidInput(source + ": cannot be read");
  std::string line;
  int n = 0;
  bool header = false, any = false;
  const std::string expected = [&] {
    std::string s;
    for (const auto& c : columns) s += (s.empty() ? "" : ",") + c;
    return s;
  }();
  while (std::getline(in, line)) {
    ++n;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::string where = source + ":" + std::to_string(n);
    std::vector<std::string> cells = split(t);
    if (!header) {
      const bool with_worker = cells.size() == columns.size() + 1 && cells.back() == "worker";
      cells.resize(std::min(cells.size(), columns.size()));
      if (cells != columns || !(split(t).size() == columns.size() || with_worker))
        throw InvalidInput(where + ": expected the header '" + expected +
                           "' (optionally ',worker'), got '" + t + "'");
      header = true;
      continue;
    }
    if (cells.size() != columns.size() && cells.size() != columns.size() + 1)
      throw InvalidInput(where + ": expected " + std::to_string(columns.size()) + " values (" +
                         expected + "[,worker]), got " + std::to_string(cells.size()));
    row(cells, where);
    any = true;
  }
  if (!header) throw InvalidInput(source + ": empty (expected the header '" + expected + "')");
  if (!any) throw InvalidInput(source + ": no rows after the header");
}

double parse_time(const std::string& cell, const std::string& where, double previous) {
  double t = 0;
  std::size_t used = 0;
  try {
    t = std::stod(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != cell.size() || cell.empty() || !std::isfinite(t) || t < 0)
    throw InvalidInput(where + ": time_s '" + cell + "' is not a number of seconds >= 0");
  if (t < previous)
    throw InvalidInput(where + ": time_s " + cell + " goes back in time (rows must not decrease)");
  return t;
}

int parse_worker(const std::vector<std::string>& cells, std::size_t at, const std::string& where) {
  if (cells.size() <= at || cells[at].empty() || cells[at] == "all") return -1;
  const std::string& c = cells[at];
  if (c.find_first_not_of("0123456789") != std::string::npos || c.size() > 6)
    throw InvalidInput(where + ": worker '" + c + "' is not a rank (or 'all')");
  return std::stoi(c);
}

template <typename Point>
std::vector<Point> rows_for(const std::vector<Point>& points, int rank) {
  std::vector<Point> out;
  for (const Point& p : points)
    if (p.worker < 0 || p.worker == rank) out.push_back(p);
  return out;  // file order is time order
}

template <typename Point>
void check_ranks(const std::vector<Point>& points, const std::string& source, int workers) {
  for (const Point& p : points)
    if (p.worker >= workers)
      throw InvalidInput(source + ": a row is for worker " + std::to_string(p.worker) +
                         ", but the job has " + std::to_string(workers) + " worker(s)");
}

}  // namespace

std::vector<LinkTracePoint> LinkTrace::for_worker(int rank) const { return rows_for(points, rank); }
void LinkTrace::check_workers(int workers) const { check_ranks(points, source, workers); }
std::vector<SlowdownTracePoint> SlowdownTrace::for_worker(int rank) const {
  return rows_for(points, rank);
}
void SlowdownTrace::check_workers(int workers) const { check_ranks(points, source, workers); }

namespace {

// The first column of the header: "iteration" for a trace keyed by iteration.
bool keyed_by_iteration(std::istream& in) {
  const std::streampos start = in.tellg();
  bool by_iteration = false;
  for (std::string line; std::getline(in, line);) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    by_iteration = split(t)[0] == "iteration";
    break;
  }
  in.clear();
  in.seekg(start);
  return by_iteration;
}

std::int64_t parse_iteration(const std::string& cell, const std::string& where,
                             std::int64_t previous) {
  if (cell.empty() || cell.size() > 12 || cell.find_first_not_of("0123456789") != std::string::npos)
    throw InvalidInput(where + ": iteration '" + cell + "' is not a whole number >= 0");
  const std::int64_t i = std::stoll(cell);
  if (i < previous)
    throw InvalidInput(where + ": iteration " + cell + " goes back (rows must not decrease)");
  return i;
}

}  // namespace

LinkTrace parse_link_trace(std::istream& in, const std::string& source) {
  LinkTrace t;
  t.source = source;
  t.by_iteration = in && keyed_by_iteration(in);
  double previous = 0;
  std::int64_t previous_iteration = 0;
  read_csv(in, source, {t.by_iteration ? "iteration" : "time_s", "down", "up", "latency"},
           [&](const std::vector<std::string>& c, const std::string& where) {
             LinkTracePoint p;
             if (t.by_iteration)
               p.iteration = previous_iteration = parse_iteration(c[0], where, previous_iteration);
             else
               p.time_s = previous = parse_time(c[0], where, previous);
             try {
               p.down_bps = parse_bandwidth_bps(c[1]);
               p.up_bps = parse_bandwidth_bps(c[2]);
               p.latency_ms = parse_duration_ms(c[3]);
             } catch (const InvalidInput& e) {
               throw InvalidInput(where + ": " + e.what());
             }
             p.worker = parse_worker(c, 4, where);
             t.points.push_back(p);
           });
  return t;
}

SlowdownTrace parse_slowdown_trace(std::istream& in, const std::string& source) {
  SlowdownTrace t;
  t.source = source;
  double previous = 0;
  read_csv(in, source, {"time_s", "factor"},
           [&](const std::vector<std::string>& c, const std::string& where) {
             SlowdownTracePoint p;
             p.time_s = previous = parse_time(c[0], where, previous);
             std::size_t used = 0;
             try {
               p.factor = std::stod(c[1], &used);
             } catch (const std::exception&) {
               used = 0;
             }
             if (used != c[1].size() || c[1].empty() || !(p.factor >= 1) || p.factor > 1000)
               throw InvalidInput(where + ": factor '" + c[1] + "' is not a number in 1..1000");
             p.worker = parse_worker(c, 2, where);
             t.points.push_back(p);
           });
  return t;
}

LinkTrace load_link_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput("link trace " + path + ": cannot be opened");
  return parse_link_trace(in, path);
}

SlowdownTrace load_slowdown_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput("device slowdown trace " + path + ": cannot be opened");
  return parse_slowdown_trace(in, path);
}

}  // namespace dynacomm::plan

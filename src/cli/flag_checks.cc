#include "cli/flag_checks.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "model/model_names.h"
#include "net/endpoint.h"
#include "plan/model/quantity.h"

namespace dynacomm::cli {

namespace {
// A check that runs `test` and reports its exception's message.
template <typename Test>
CLI::Validator checked_by(Test test, const char* what) {
  return CLI::Validator(
      [test](std::string& v) -> std::string {
        try {
          test(v);
        } catch (const std::exception& e) {
          return e.what();
        }
        return {};
      },
      what);
}
}  // namespace

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

CLI::Validator bandwidth_check() {
  return checked_by([](const std::string& v) { (void)plan::parse_bandwidth_bps(v); }, "BANDWIDTH");
}

CLI::Validator duration_check() {
  return checked_by([](const std::string& v) { (void)plan::parse_duration_ms(v); }, "DURATION");
}

CLI::Validator positive_duration_check() {
  return checked_by(
      [](const std::string& v) {
        if (!(plan::parse_duration_ms(v) > 0))
          throw std::invalid_argument("'" + v + "': a duration above 0 is needed, e.g. 60s");
      },
      "DURATION>0");
}

namespace {
std::vector<std::string> items(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  for (char c : list + ",") {
    if (c != ',') {
      item += c;
    } else if (!item.empty()) {
      out.push_back(item);
      item.clear();
    }
  }
  return out;
}
}  // namespace

CLI::Validator list_of_check(const std::vector<std::string>& known) {
  return checked_by(
      [known](const std::string& v) {
        const std::vector<std::string> names = items(v);
        if (names.empty()) throw std::invalid_argument("'" + v + "' names nothing");
        for (const auto& n : names)
          if (std::find(known.begin(), known.end(), n) == known.end())
            throw std::invalid_argument("'" + n + "' is not one of " + listed(known));
      },
      "LIST");
}

CLI::Validator bandwidth_list_check() {
  return checked_by(
      [](const std::string& v) {
        for (const auto& b : items(v)) (void)plan::parse_bandwidth_bps(b);
      },
      "BANDWIDTHS");
}

CLI::Validator unsigned_check() {
  return checked_by(
      [](const std::string& v) {
        if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
          throw std::invalid_argument("'" + v + "': expected a whole number from 0 to 10^19");
      },
      "UINT");
}

CLI::Validator model_check() {
  // A file becomes an absolute path: the launcher's processes and the job file name it alike.
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const auto& zoo = model::zoo_model_names();
        if (std::find(zoo.begin(), zoo.end(), v) != zoo.end()) return {};
        // A module trained from Python (dynacomm.Worker): the PS serves it by name.
        if (v.rfind("python:", 0) == 0 && v.size() > 7) return {};
        if (!model::is_model_file(v))
          return "'" + v + "' is not one of " + listed(zoo) + ", nor a TorchScript file (*.pt)";
        if (!std::ifstream(v).good()) return "model file '" + v + "' cannot be read";
        v = std::filesystem::absolute(v).lexically_normal().string();
        return {};
      },
      "MODEL");
}

std::string model_help() {
  return listed(model::zoo_model_names()) +
         ", or a TorchScript file *.pt whose top-level children are the units "
         "(docs/own-data.md); the PS also takes python:NAME, a dynacomm.Worker's module";
}

CLI::Validator endpoint_check() {
  return checked_by([](const std::string& v) { net::check_endpoint(v, "endpoint"); }, "ENDPOINT");
}

}  // namespace dynacomm::cli

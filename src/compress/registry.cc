// make_compressor: a spec's method, its parameter and its error feedback.
#include <cmath>
#include <functional>
#include <vector>

#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

// What a method is made from: its parameters (the defaults where the spec gives none),
// the job's seed and momentum.
struct Made {
  double p = 0, q = 0;
  std::uint64_t seed = 1;
  double momentum = 0;
};
struct Method {
  MethodInfo info;
  bool feedback;   // error feedback unless the spec says ",noef"
  int parameters;  // how many it takes (METHOD:P or METHOD:P:Q)
  std::function<std::unique_ptr<Compressor>(const Made&)> make;
};

double ratio_of(double r, const std::string& method) {
  if (!(r > 0 && r <= 1))
    throw InvalidInput(method + ": the ratio must be in (0, 1], e.g. " + method + ":0.01");
  return r;
}

const std::vector<Method>& table() {
  static const std::vector<Method> t = {
      {{"none", "", "float32 as it is"}, false, 0, [](const Made&) { return make_none(); }},
      {{"fp16", "", "IEEE half precision"}, false, 0, [](const Made&) { return make_fp16(); }},
      {{"qsgd", "levels (64)", "QSGD, stochastic levels, unbiased"},
       false,
       1,
       [](const Made& m) {
         if (!(m.p >= 1 && m.p <= 65535 && m.p == std::floor(m.p)))
           throw InvalidInput("qsgd: the levels must be a whole number in 1..65535, e.g. qsgd:64");
         return make_qsgd(static_cast<int>(m.p), m.seed);
       }},
      {{"terngrad", "", "TernGrad, ternary, unbiased"},
       false,
       0,
       [](const Made& m) { return make_terngrad(m.seed); }},
      {{"signsgd", "", "scaled sign"},
       false,
       0,
       [](const Made&) { return make_signsgd("signsgd"); }},
      {{"efsignsgd", "", "scaled sign with error feedback (EF-SignSGD)"},
       true,
       0,
       [](const Made&) { return make_signsgd("efsignsgd"); }},
      {{"onebit", "", "1-bit SGD with error feedback"},
       true,
       0,
       [](const Made&) { return make_onebit(); }},
      {{"topk", "ratio (0.01)", "top-k sparsification with error feedback"},
       true,
       1,
       [](const Made& m) { return make_topk(ratio_of(m.p, "topk")); }},
      {{"randomk", "ratio (0.01)", "random-k, indices from the shared seed, error feedback"},
       true,
       1,
       [](const Made& m) { return make_randomk(ratio_of(m.p, "randomk"), m.seed); }},
      {{"dgc", "density (0.001), warm-up stage in iterations (200)",
        "Deep Gradient Compression: momentum correction and masking, density warm-up"},
       false,
       2,
       [](const Made& m) {
         if (!(m.q >= 0 && m.q <= 1e9 && m.q == std::floor(m.q)))
           throw InvalidInput(
               "dgc: the warm-up stage must be a whole number of iterations, "
               "e.g. dgc:0.001:200 (0: no warm-up)");
         return make_dgc(ratio_of(m.p, "dgc"), static_cast<std::int64_t>(m.q), m.momentum);
       }},
  };
  return t;
}

double default_parameter(const std::string& method) {
  return method == "qsgd" ? 64 : method == "dgc" ? 0.001 : 0.01;
}

}  // namespace

const std::vector<MethodInfo>& methods() {
  static const std::vector<MethodInfo> m = [] {
    std::vector<MethodInfo> out;
    for (const Method& x : table()) out.push_back(x.info);
    return out;
  }();
  return m;
}

namespace {

// "0.001:200" as numbers; InvalidInput naming the one that is not a number.
std::vector<double> parse_parameters(const std::string& parameter, const std::string& spec) {
  std::vector<double> out;
  std::size_t begin = 0;
  while (begin <= parameter.size()) {
    std::size_t end = parameter.find(':', begin);
    if (end == std::string::npos) end = parameter.size();
    const std::string one = parameter.substr(begin, end - begin);
    char* stop = nullptr;
    const double value = std::strtod(one.c_str(), &stop);
    if (one.empty() || stop == one.c_str() || *stop != 0)
      throw InvalidInput("compression '" + spec + "': '" + one + "' is not a number");
    out.push_back(value);
    begin = end + 1;
  }
  return out;
}

}  // namespace

std::unique_ptr<Compressor> make_compressor(const std::string& spec, std::uint64_t seed,
                                            double momentum) {
  std::string head = spec, option;
  if (const auto comma = spec.find(','); comma != std::string::npos) {
    head = spec.substr(0, comma);
    option = spec.substr(comma + 1);
    if (option != "ef" && option != "noef")
      throw InvalidInput("compression '" + spec + "': after the comma, ef or noef");
  }
  std::string method = head, parameter;
  if (const auto colon = head.find(':'); colon != std::string::npos) {
    method = head.substr(0, colon);
    parameter = head.substr(colon + 1);
  }
  for (const Method& m : table()) {
    if (m.info.name != method) continue;
    const std::vector<double> given =
        parameter.empty() ? std::vector<double>{} : parse_parameters(parameter, spec);
    if (static_cast<int>(given.size()) > m.parameters)
      throw InvalidInput("compression '" + spec + "': " + method + " takes " +
                         (m.parameters == 0
                              ? std::string("no parameter")
                              : "at most " + std::to_string(m.parameters) + " parameter(s)"));
    Made made{default_parameter(method), method == "dgc" ? 200.0 : 0.0, seed, momentum};
    if (!given.empty()) made.p = given[0];
    if (given.size() > 1) made.q = given[1];
    std::unique_ptr<Compressor> c = m.make(made);
    const bool feedback = option.empty() ? m.feedback : option == "ef";
    if (feedback && method == "none")
      throw InvalidInput("compression '" + spec + "': none leaves nothing out to feed back");
    if (feedback && method == "dgc")
      throw InvalidInput("compression '" + spec +
                         "': dgc accumulates what it leaves out itself (no ,ef)");
    return feedback ? with_error_feedback(std::move(c)) : std::move(c);
  }
  if (method == "powersgd")
    throw InvalidInput("compression '" + spec +
                       "': powersgd runs with --arch allreduce, where its two sums per bucket "
                       "are two all-reduces (docs/compression.md); it is not built for a PS");
  std::string known;
  for (const Method& m : table()) known += (known.empty() ? "" : ", ") + m.info.name;
  known += ", powersgd (--arch allreduce)";
  throw InvalidInput("unknown compression '" + method + "' (known: " + known + ")");
}

bool moves_momentum(const std::string& spec) {
  return spec.rfind("dgc", 0) == 0 && (spec.size() == 3 || spec[3] == ':' || spec[3] == ',');
}

bool sums_selected_values(const std::string& spec) {
  return spec.rfind("randomk", 0) == 0 && (spec.size() == 7 || spec[7] == ':' || spec[7] == ',');
}

}  // namespace dynacomm::compress

// make_compressor: a spec's method, its parameter and its error feedback.
#include <cmath>
#include <functional>

#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

struct Method {
  MethodInfo info;
  bool feedback;  // error feedback unless the spec says ",noef"
  bool parameter;
  std::function<std::unique_ptr<Compressor>(double, std::uint64_t)> make;
};

double ratio_of(double r, const std::string& method) {
  if (!(r > 0 && r <= 1))
    throw InvalidInput(method + ": the ratio must be in (0, 1], e.g. " + method + ":0.01");
  return r;
}

const std::vector<Method>& table() {
  static const std::vector<Method> t = {
      {{"none", "", "float32 as it is"}, false, false, [](double, auto) { return make_none(); }},
      {{"fp16", "", "IEEE half precision"}, false, false, [](double, auto) { return make_fp16(); }},
      {{"qsgd", "levels (64)", "QSGD, stochastic levels, unbiased"},
       false,
       true,
       [](double s, std::uint64_t seed) {
         if (!(s >= 1 && s <= 65535 && s == std::floor(s)))
           throw InvalidInput("qsgd: the levels must be a whole number in 1..65535, e.g. qsgd:64");
         return make_qsgd(static_cast<int>(s), seed);
       }},
      {{"terngrad", "", "TernGrad, ternary, unbiased"},
       false,
       false,
       [](double, std::uint64_t seed) { return make_terngrad(seed); }},
      {{"signsgd", "", "scaled sign"},
       false,
       false,
       [](double, auto) { return make_signsgd("signsgd"); }},
      {{"efsignsgd", "", "scaled sign with error feedback (EF-SignSGD)"},
       true,
       false,
       [](double, auto) { return make_signsgd("efsignsgd"); }},
      {{"onebit", "", "1-bit SGD with error feedback"},
       true,
       false,
       [](double, auto) { return make_onebit(); }},
      {{"topk", "ratio (0.01)", "top-k sparsification with error feedback"},
       true,
       true,
       [](double r, auto) { return make_topk(ratio_of(r, "topk")); }},
      {{"randomk", "ratio (0.01)", "random-k, indices from the shared seed, error feedback"},
       true,
       true,
       [](double r, std::uint64_t seed) { return make_randomk(ratio_of(r, "randomk"), seed); }},
  };
  return t;
}

double default_parameter(const std::string& method) { return method == "qsgd" ? 64 : 0.01; }

}  // namespace

const std::vector<MethodInfo>& methods() {
  static const std::vector<MethodInfo> m = [] {
    std::vector<MethodInfo> out;
    for (const Method& x : table()) out.push_back(x.info);
    return out;
  }();
  return m;
}

std::unique_ptr<Compressor> make_compressor(const std::string& spec, std::uint64_t seed) {
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
    if (!m.parameter && !parameter.empty())
      throw InvalidInput("compression '" + spec + "': " + method + " takes no parameter");
    double value = default_parameter(method);
    if (!parameter.empty()) {
      char* end = nullptr;
      value = std::strtod(parameter.c_str(), &end);
      if (end == parameter.c_str() || *end != 0)
        throw InvalidInput("compression '" + spec + "': '" + parameter + "' is not a number");
    }
    std::unique_ptr<Compressor> c = m.make(value, seed);
    const bool feedback = option.empty() ? m.feedback : option == "ef";
    if (feedback && method == "none")
      throw InvalidInput("compression '" + spec + "': none leaves nothing out to feed back");
    return feedback ? with_error_feedback(std::move(c)) : std::move(c);
  }
  std::string known;
  for (const Method& m : table()) known += (known.empty() ? "" : ", ") + m.info.name;
  throw InvalidInput("unknown compression '" + method + "' (known: " + known + ")");
}

}  // namespace dynacomm::compress

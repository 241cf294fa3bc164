// `dynacomm profile`: measure a model's per-unit compute times and sizes on this machine.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "model/model_names.h"
#include "train/profiler.h"

namespace dynacomm::cli {

void add_profile_command(CLI::App& app) {
  struct Flags {
    train::ProfileOptions options;
    std::string input = "1x28x28";
    std::string out;
  };
  auto f = std::make_shared<Flags>();
  auto& o = f->options;
  CLI::App* cmd = app.add_subcommand(
      "profile", "Measure per-unit forward/backward times and sizes; writes a plan profile");
  cmd->add_option("--model", o.model, model_help())->transform(model_check())->capture_default_str();
  cmd->add_option("--input", f->input, "Input shape CxHxW, e.g. 1x28x28 or 3x224x224")
      ->capture_default_str();
  cmd->add_option("--classes", o.classes, "Classes (0: 10 for small inputs, else 1000)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--batch", o.batch, "Mini-batch size")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "Compute threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--iterations", o.iterations, "Measured iterations (median)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "Warm-up iterations, not measured")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed for weights and synthetic data")->capture_default_str();
  cmd->add_option("--out", f->out, "Write the profile JSON here instead of stdout");
  cmd->callback([f]() {
    f->options.input = model::InputShape::parse(f->input);
    plan::ModelProfile p = train::profile_model(f->options);
    if (f->out.empty()) {
      std::cout << plan::to_json(p).dump(1) << "\n";
    } else {
      plan::save_model_profile(p, f->out);
      std::cerr << "profile of " << p.model << " (" << p.num_units() << " units) written to "
                << f->out << "\n";
    }
  });
}

}  // namespace dynacomm::cli

// `dynacomm init`: a model's initial parameters, the ones a job with the same --seed starts
// from, as model.pt and weights.bin; e.g. to start a PyTorch or TorchScript copy of a zoo
// model from them (examples/torchscript_model.py --init).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "model/model.h"
#include "report/run_folder.h"

namespace dynacomm::cli {

void add_init_command(CLI::App& app) {
  struct Flags {
    model::ModelOptions options;
    std::string input = "1x28x28";
    std::string out;
  };
  auto f = std::make_shared<Flags>();
  auto& o = f->options;
  CLI::App* cmd = app.add_subcommand(
      "init", "Write a model's initial parameters (as a job with --seed starts) to a folder");
  cmd->add_option("--model", o.name, model_help())->transform(model_check())->capture_default_str();
  cmd->add_option("--input", f->input, "Input shape CxHxW (Fashion-MNIST: 1x28x28)")
      ->capture_default_str();
  cmd->add_option("--classes", o.classes, "Classes")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed for the weights (a job's --seed)")->capture_default_str();
  cmd->add_option("--out", f->out, "Folder for model.pt and weights.bin")->required();
  cmd->callback([f]() {
    f->options.input = model::InputShape::parse(f->input);
    auto m = model::make_model(f->options);
    report::RunFolder run(f->out);
    run.write_floats("weights.bin", m->flat_params());
    run.write_text("model.pt", m->export_pt());
    std::cerr << "initial " << f->options.name << " (" << m->num_params() << " parameters, seed "
              << f->options.seed << "): " << run.file("model.pt") << ", " << run.file("weights.bin")
              << "\n";
  });
}

}  // namespace dynacomm::cli

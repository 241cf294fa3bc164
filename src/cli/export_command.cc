// `dynacomm export`: a model as model.pt (torch.load reads it) and weights.bin, from a PS
// checkpoint (the parameters of iteration J) or, without one, as a job with --seed starts.
#include <iostream>
#include <memory>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "model/model.h"
#include "ps/checkpoint.h"
#include "report/run_folder.h"

namespace dynacomm::cli {

namespace {

struct ExportFlags {
  model::ModelOptions options;
  std::string input = "1x28x28";
  std::string checkpoint;
  std::string out;
};

// The checkpoint's model with its parameters. Batch-norm statistics are the workers' own
// and not in a PS checkpoint: the model keeps fresh ones.
std::unique_ptr<model::Model> from_checkpoint(ExportFlags& f) {
  const std::vector<std::string> files = ps::checkpoint_files(f.checkpoint);
  const std::string path = files.empty() ? f.checkpoint : files.front();
  const ps::Checkpoint c = ps::read_checkpoint(path);
  f.options.name = c.job.model;
  auto m = model::make_model(f.options);
  try {
    m->set_flat_params(c.flat_params());
  } catch (const InvalidInput& e) {
    throw InvalidInput(path + ": " + e.what() + " (give the job's --input, --classes)");
  }
  std::cerr << path << ": iteration " << c.iteration << "\n";
  return m;
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto f = std::make_shared<ExportFlags>();
  auto& o = f->options;
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a model as model.pt and weights.bin: from a PS checkpoint, or initial");
  cmd->add_option("--checkpoint", f->checkpoint,
                  "A PS checkpoint file, or a --checkpoint-dir (its newest); its model and "
                  "parameters (batch-norm statistics are the workers': fresh ones here)");
  cmd->add_option("--model", o.name, "Without --checkpoint: " + model_help())
      ->transform(model_check())
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Without --checkpoint: the job's --seed (initial weights)")
      ->capture_default_str();
  cmd->add_option("--input", f->input, "Input shape CxHxW (Fashion-MNIST: 1x28x28)")
      ->capture_default_str();
  cmd->add_option("--classes", o.classes, "Classes")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "Folder for model.pt and weights.bin")->required();
  cmd->callback([f, cmd]() {
    f->options.input = model::InputShape::parse(f->input);
    if (!f->checkpoint.empty() && (cmd->count("--model") || cmd->count("--seed")))
      throw InvalidInput("--checkpoint names its model and parameters: drop --model, --seed");
    auto m = f->checkpoint.empty() ? model::make_model(f->options) : from_checkpoint(*f);
    report::RunFolder run(f->out);
    run.write_floats("weights.bin", m->flat_params());
    run.write_text("model.pt", m->export_pt());
    std::cerr << f->options.name << " (" << m->num_params()
              << " parameters): " << run.file("model.pt") << ", " << run.file("weights.bin")
              << "\n";
  });
}

}  // namespace dynacomm::cli

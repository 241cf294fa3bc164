// `dynacomm trace merge`: one Chrome trace from the traces a manual multi-machine run
// leaves on each machine (each worker's trace-worker<R>.json, the PS's --trace file), on
// the PS's clock (report/trace_merge.h). `dynacomm train` merges its own.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "report/chrome_trace.h"
#include "report/trace_merge.h"

namespace dynacomm::cli {

void add_trace_command(CLI::App& app) {
  struct Flags {
    std::vector<std::string> inputs;
    std::string out = "trace.json";
    bool shared_clock = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* trace = app.add_subcommand("trace", "Work with Chrome traces of runs");
  trace->require_subcommand(1);
  CLI::App* merge = trace->add_subcommand(
      "merge",
      "Merge the traces of one job's workers and PS, written on several machines, into one "
      "timeline on the PS's clock (each worker's trace records its offset to it)");
  merge->add_option("traces", f->inputs, "trace-worker<R>.json files and the PS's --trace file")
      ->required()
      ->check(CLI::ExistingFile);
  merge->add_option("--out", f->out, "The merged trace")->capture_default_str();
  merge->add_flag("--shared-clock", f->shared_clock,
                  "The traces come from one machine: merge them on its clock as they are");
  merge->callback([f]() {
    const nlohmann::json merged = report::merge_traces(
        f->inputs, f->shared_clock ? report::Clocks::kShared : report::Clocks::kToPs);
    report::ChromeTrace::write_json(f->out, merged);
    std::printf("%zu events from %zu traces in %s (open it in chrome://tracing or Perfetto)\n",
                merged["traceEvents"].size(), f->inputs.size(), f->out.c_str());
  });
}

}  // namespace dynacomm::cli

// The job protocol's messages that are not parameters: a worker's hello (kHello, worker ->
// PS: what it runs), the job's configuration (kJobConfig,
// PS -> a worker before it joins), the plans a worker offers after
// its warm-up (kPlans, worker -> PS), the job's agreed plans (kPlans, PS -> every worker),
// a worker's re-planning report (kReplan, worker -> PS) and the job's plan change
// (kReplan, PS -> every worker). One struct and one encoding (JSON) each; ps/agreement.h
// says what the PS decides from them.
//
//   std::string text = encode(PlanOffer{{{0, 812.5, plan_json}}});
//   PlanOffer o = decode_plan_offer(payload, size);   // InvalidInput saying what is wrong
//
// Plans travel as JSON text (plan::to_json); the PS forwards them without reading them,
// and each worker checks a peer's plan against its own model (worker/job_plans.h).
// Decoders take untrusted bytes: they check every field and the nesting depth before
// anything looks at the values, and throw InvalidInput naming what is wrong; they never
// crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dynacomm::net {

// What a worker runs, sent at join: the PS pins the job to the first worker's (model,
// workers, unit layout) and refuses a later one that differs.
struct Hello {
  std::string model;
  int workers = 0;
  std::vector<std::int64_t> unit_bytes;          // each unit's (or atom's) float32 bytes, in order
  std::int64_t total_iterations = 0;             // the job's length (for learning-rate schedules)
  std::int64_t trace_from = 0, trace_count = 0;  // the iterations the workers trace
  std::vector<std::pair<std::string, std::string>> config;  // its job settings (JobConfig's)
};

// A worker's full-duplex plans, each with its own prediction (ms) of the iteration.
struct PlanOffer {
  struct Entry {
    int index = 0;  // the strategy's place in the worker's rotation (0: the only one)
    double predicted_ms = 0;
    std::string plan;  // JSON object
  };
  std::vector<Entry> plans;
};

// For each strategy, the plan the job runs: the offer of the worker (`rank`) that
// predicted itself slowest with it.
struct AgreedPlans {
  struct Entry {
    int index = 0;
    int rank = 0;
    double predicted_ms = 0;
    std::string plan;
  };
  std::vector<Entry> plans;
};

// A worker's judgement of the job's plan in use, made at an iteration (the header's).
struct ReplanReport {
  struct Proposal {
    double predicted_ms = 0;  // of the plan it proposes, > 0
    std::string plan;
    std::string why;
  };
  double current_ms = 0;  // its prediction of the plan in use, > 0
  std::optional<Proposal> proposal;
};

// The job's next plan, every worker's from `from_iteration` on.
struct JobPlanChange {
  std::string plan;
  double predicted_ms = 0;  // the proposer's prediction of it
  double current_ms = 0;    // the proposer's prediction of the plan it replaces
  int rank = 0;             // the proposer
  std::int64_t from_iteration = 0;
  std::string why;
};

// The job's settings as the PS was given them: flag and value, as `dynacomm ps` would
// take them ("--batch", "32"), job-wide ones only (cli/job_flags.h lists them). A worker
// adopts them and refuses to run when its own command line says otherwise.
struct JobConfig {
  std::vector<std::pair<std::string, std::string>> settings;
  const std::string* find(const std::string& flag) const;  // nullptr: not set
};

std::string encode(const Hello& m);
std::string encode(const JobConfig& m);
std::string encode(const PlanOffer& m);
std::string encode(const AgreedPlans& m);
std::string encode(const ReplanReport& m);
std::string encode(const JobPlanChange& m);

Hello decode_hello(const void* data, std::size_t size);
JobConfig decode_job_config(const void* data, std::size_t size);
PlanOffer decode_plan_offer(const void* data, std::size_t size);
AgreedPlans decode_agreed_plans(const void* data, std::size_t size);
ReplanReport decode_replan_report(const void* data, std::size_t size);
JobPlanChange decode_job_plan_change(const void* data, std::size_t size);

// JSON nested deeper than this is refused before it is parsed (a recursive parser would
// run out of stack on a peer's 4 million brackets).
constexpr int kMaxJsonDepth = 64;

// A hello's bounds: units (atoms) per model, bytes per unit and per model.
constexpr std::int64_t kMaxHelloUnits = 1 << 20;
constexpr std::int64_t kMaxModelBytes = std::int64_t{1} << 36;  // 64 GiB of float32

}  // namespace dynacomm::net

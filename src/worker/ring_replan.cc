#include "worker/ring_replan.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <utility>

#include "base/error.h"
#include "plan/replan/ring_replan.h"
#include "worker/comm.h"

namespace dynacomm::worker {

std::string encode_buckets(const std::vector<plan::Segment>& buckets) {
  std::ostringstream s;
  for (std::size_t b = 0; b < buckets.size(); ++b)
    s << (b ? "," : "") << buckets[b].first << "-" << buckets[b].last;
  return s.str();
}

std::vector<plan::Segment> decode_buckets(const std::string& text, int units) {
  std::vector<plan::Segment> out;
  std::istringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    plan::Segment seg;
    char dash = 0;
    std::istringstream one(item);
    if (!(one >> seg.first >> dash >> seg.last) || dash != '-')
      throw Error("all-reduce: rank 0's buckets '" + text + "' are malformed");
    out.push_back(seg);
  }
  plan::Plan(std::string("ring"), {{0, units - 1}}, out).validate(units);
  return out;
}

std::vector<plan::TransferSample> transfer_samples(const std::vector<BucketRing::BucketTime>& t) {
  std::vector<plan::TransferSample> out;
  for (const BucketRing::BucketTime& b : t)
    out.push_back({static_cast<double>(b.bytes), ms_between(b.start, b.end) - b.compute_ms, 1.0});
  return out;
}

RingReplanner::RingReplanner(const WorkerOptions& o, collective::RingGroup& group,
                             WorkerResult& result, RunLog& log, std::ostream& progress)
    : o_(o), group_(group), result_(result), log_(log), progress_(progress) {}

void RingReplanner::start(std::int64_t it, std::vector<plan::Segment> buckets,
                          plan::ModelProfile profile, plan::RingCost cost) {
  buckets_ = std::move(buckets);
  profile_ = std::move(profile);
  last_ = cost_ = cost;
  started_ = it;
  units_ = 0;
  for (const plan::Segment& b : buckets_) units_ = std::max(units_, b.last + 1);
  if (o_.rank == 0 && o_.workers > 1 &&
      (o_.replan == plan::ReplanMode::kStatic || o_.replan == plan::ReplanMode::kOracle))
    progress_ << "all-reduce: --replan " << plan::to_string(o_.replan)
              << ": the buckets stay as first planned"
              << (o_.replan == plan::ReplanMode::kOracle ? " (oracle re-plans the PS's plans only)"
                                                         : "")
              << "\n";
}

void RingReplanner::record(const std::vector<BucketRing::BucketTime>& times) {
  if (o_.rank != 0) return;
  for (const plan::TransferSample& s : transfer_samples(times)) recent_.push_back(s);
}

bool RingReplanner::due(std::int64_t it, std::int64_t step) const {
  if (o_.workers < 2 || o_.buckets != "planned" || started_ < 0 || it <= started_) return false;
  if (probing_) return true;  // the probe's iteration is done: the decision
  switch (o_.replan) {
    case plan::ReplanMode::kDynamic:
      return (it - started_) % o_.replan_options.min_interval == 0;
    case plan::ReplanMode::kEpoch:
      return step == 0;
    default:
      return false;
  }
}

std::string RingReplanner::decide(std::int64_t it) {
  // A probe at most every 10 re-plans (each costs one more fixed part of the ring).
  const std::int64_t every =
      o_.replan == plan::ReplanMode::kEpoch ? 0 : 10 * o_.replan_options.min_interval;
  if (!probing_ && it - last_probe_ >= every)
    if (const auto probe = plan::ring_probe(profile_, recent_)) {  // recent_ kept for the fit
      if (last_probe_ < 0)
        progress_ << "all-reduce: the all-reduces are of one size, which cannot tell the "
                     "ring's fixed part from its bandwidth: from iteration "
                  << it << " on, one iteration every "
                  << (every ? std::to_string(every) + " iterations" : std::string("epoch"))
                  << " runs buckets " << plan::format_segments(*probe) << " to tell them\n";
      last_probe_ = it;
      return kProbe + encode_buckets(*probe);
    }
  const plan::RingCost now = plan::refit_ring_cost(last_, recent_);
  recent_.clear();
  last_ = now;
  const double threshold =
      o_.replan == plan::ReplanMode::kEpoch ? 0.0 : o_.replan_options.threshold;
  const std::vector<plan::Segment>& current = probing_ ? resume_ : buckets_;
  const plan::RingReplan r = plan::replan_ring(profile_, now, current, threshold);
  if (!r.change) return "same";
  char why[200];
  std::snprintf(why, sizeof why, "ring cost %.1f ms + %.1f Mbit/s, was %.1f ms + %.1f",
                now.fixed_ms, now.bps / 1e6, cost_.fixed_ms, cost_.bps / 1e6);
  cost_ = now;
  ++plan_id_;
  const plan::Plan p("allreduce-" + o_.buckets, {{0, profile_.num_units() - 1}}, r.buckets);
  result_.plans.push_back({plan_id_, p.scheduler, p, r.best_ms, r.best_ms, 0, 0});
  result_.plan_changes.push_back({it, plan_id_, why, r.current_ms, r.best_ms});
  log_.plan_changed(it, plan_id_, why, r.current_ms, r.best_ms);
  char line[300];
  std::snprintf(line, sizeof line,
                "all-reduce: plan %d from iteration %lld: %zu bucket(s) %s (%s; predicted %.1f -> "
                "%.1f ms)\n",
                plan_id_, static_cast<long long>(it), r.buckets.size(),
                plan::format_segments(r.buckets).c_str(), why, r.current_ms, r.best_ms);
  progress_ << line;
  return encode_buckets(r.buckets);
}

const std::vector<plan::Segment>& RingReplanner::before_iteration(std::int64_t it,
                                                                  std::int64_t step) {
  if (!due(it, step)) return buckets_;
  const std::string key = "replan/" + std::to_string(it);
  std::string text;
  if (o_.rank == 0) {
    text = decide(it);
    group_.publish(key, text);
  } else {
    text = group_.read(key);
  }
  if (text.rfind(kProbe, 0) == 0) {  // one iteration with the probe's buckets, then back
    resume_ = buckets_;
    probing_ = true;
    buckets_ = decode_buckets(text.substr(std::strlen(kProbe)), units_);
    return buckets_;
  }
  if (std::exchange(probing_, false) && text == "same") buckets_ = resume_;
  if (text != "same") {
    buckets_ = decode_buckets(text, units_);
    if (o_.rank != 0) {  // rank 0's plan, its predictions rank 0's
      ++plan_id_;
      const plan::Plan p("allreduce-" + o_.buckets, {{0, units_ - 1}}, buckets_);
      result_.plans.push_back({plan_id_, p.scheduler, p, 0, 0, 0, 0});
    }
  }
  return buckets_;
}

}  // namespace dynacomm::worker

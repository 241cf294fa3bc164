#include "worker/data_share.h"

#include <algorithm>

#include "base/error.h"
#include "data/partition.h"
#include "worker/external_step.h"

namespace dynacomm::worker {

DataShare share_of(const WorkerOptions& o, const data::Dataset& train) {
  DataShare s;
  if (o.external) {  // the caller's batches: none is made here
    s.steps_per_epoch = o.external->steps_per_epoch();
    s.total = s.steps_per_epoch * o.epochs;
    if (o.iterations > 0) s.total = std::min(s.total, o.iterations);
    return s;
  }
  const std::int64_t n_train =
      o.train_samples > 0 ? std::min(o.train_samples, train.size()) : train.size();
  std::vector<std::uint8_t> labels(train.labels.begin(), train.labels.begin() + n_train);
  auto parts = data::partition(labels, o.workers, o.partition);
  s.mine = parts[static_cast<std::size_t>(o.rank)];
  std::sort(s.mine.begin(), s.mine.end());  // with one worker: the same order as --local
  std::size_t smallest = s.mine.size();
  for (const auto& p : parts) smallest = std::min(smallest, p.size());
  s.steps_per_epoch = (static_cast<std::int64_t>(smallest) + o.batch - 1) / o.batch;
  s.total = s.steps_per_epoch * o.epochs;
  if (o.iterations > 0) s.total = std::min(s.total, o.iterations);
  if (s.total < 1)
    throw InvalidInput("worker: no iterations to run (too little data for the batch size?)");
  return s;
}

std::vector<std::int64_t> epoch_order(const WorkerOptions& o, const DataShare& share, int epoch) {
  std::vector<std::int64_t> order = share.mine;
  data::shuffle(order, o.seed * 1000003 + static_cast<std::uint64_t>(epoch));
  return order;
}

std::unique_ptr<model::Model> model_for(const WorkerOptions& o, const data::Dataset& train) {
  if (o.external) return o.external->take_model();
  return model::make_model(
      {o.model, model::InputShape{train.channels, train.rows, train.cols}, train.classes, o.seed});
}

}  // namespace dynacomm::worker

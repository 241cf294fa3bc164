#include "data/partition.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "base/error.h"

namespace dynacomm::data {

PartitionKind parse_partition_kind(const std::string& s) {
  if (s == "iid") return PartitionKind::kIid;
  if (s == "noniid" || s == "non-iid") return PartitionKind::kNonIid;
  throw InvalidInput("partition '" + s + "': expected iid or noniid");
}

void shuffle(std::vector<std::int64_t>& v, std::uint64_t seed) {
  std::mt19937_64 rng(seed);  // mt19937_64's output sequence is fixed by the standard
  for (std::size_t i = v.size(); i > 1; --i) {
    std::size_t j = static_cast<std::size_t>(rng() % i);  // bias negligible for our sizes
    std::swap(v[i - 1], v[j]);
  }
}

std::vector<std::vector<std::int64_t>> partition(const std::vector<std::uint8_t>& labels,
                                                 int devices, const PartitionOptions& o) {
  if (devices < 1) throw InvalidInput("partition: need at least one device");
  const auto n = static_cast<std::int64_t>(labels.size());
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::vector<std::int64_t>> parts(static_cast<std::size_t>(devices));

  if (o.kind == PartitionKind::kIid) {
    shuffle(order, o.seed);
    for (int r = 0; r < devices; ++r) {  // contiguous chunks, sizes differ by at most one
      std::int64_t begin = n * r / devices, end = n * (r + 1) / devices;
      parts[r].assign(order.begin() + begin, order.begin() + end);
    }
    return parts;
  }

  if (o.shards_per_device < 1) throw InvalidInput("partition: shards_per_device must be >= 1");
  const std::int64_t shards = static_cast<std::int64_t>(devices) * o.shards_per_device;
  if (shards > n)
    throw InvalidInput("partition: " + std::to_string(shards) + " shards for " + std::to_string(n) +
                       " samples");
  // Sort by label (stable, ties by index), cut into equal shards, deal shards out at random.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return labels[a] < labels[b]; });
  std::vector<std::int64_t> shard_ids(static_cast<std::size_t>(shards));
  std::iota(shard_ids.begin(), shard_ids.end(), 0);
  shuffle(shard_ids, o.seed);
  for (std::int64_t s = 0; s < shards; ++s) {
    const std::int64_t shard = shard_ids[s];
    std::int64_t begin = n * shard / shards, end = n * (shard + 1) / shards;
    auto& part = parts[static_cast<std::size_t>(s / o.shards_per_device)];
    part.insert(part.end(), order.begin() + begin, order.begin() + end);
  }
  return parts;
}

}  // namespace dynacomm::data

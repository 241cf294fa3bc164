// Splitting a data set across N devices, and shuffling, deterministically from a seed.
//
//   auto parts = partition(labels, 4, PartitionOptions{PartitionKind::kNonIid, 2, 7});
//   parts[r] holds the sample indices device r trains on; every sample is in exactly one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dynacomm::data {

enum class PartitionKind { kIid, kNonIid };

struct PartitionOptions {
  PartitionKind kind = PartitionKind::kIid;
  // non-iid: each device gets this many label-sorted shards, so it sees about this many
  // classes (the scheme of McMahan et al., "Communication-Efficient Learning ...").
  int shards_per_device = 2;
  std::uint64_t seed = 1;
};

PartitionKind parse_partition_kind(const std::string& s);  // "iid" | "noniid"

// Throws InvalidInput when devices < 1, or non-iid asks for more shards than samples.
std::vector<std::vector<std::int64_t>> partition(const std::vector<std::uint8_t>& labels,
                                                 int devices, const PartitionOptions& options);

// A seeded permutation of `indices` (the same on every platform: our own Fisher-Yates
// over a fixed generator, not std::shuffle, whose algorithm is implementation-defined).
void shuffle(std::vector<std::int64_t>& indices, std::uint64_t seed);

}  // namespace dynacomm::data

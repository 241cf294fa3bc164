#include "data/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/error.h"

namespace dynacomm::data {
namespace {

std::vector<std::uint8_t> labels(int n) {
  std::vector<std::uint8_t> l(n);
  for (int i = 0; i < n; ++i) l[i] = static_cast<std::uint8_t>((i * 7) % 10);
  return l;
}

void expect_exact_cover(const std::vector<std::vector<std::int64_t>>& parts, int n) {
  std::vector<int> seen(n);
  for (const auto& p : parts)
    for (auto i : p) {
      ASSERT_GE(i, 0);
      ASSERT_LT(i, n);
      ++seen[i];
    }
  for (int i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "sample " << i;
}

TEST(Partition, IidCoversEverySampleOnceInBalancedParts) {
  for (int devices : {1, 2, 3, 7}) {
    auto parts = partition(labels(1003), devices, {PartitionKind::kIid, 2, 5});
    ASSERT_EQ(parts.size(), static_cast<std::size_t>(devices));
    expect_exact_cover(parts, 1003);
    auto [lo, hi] = std::minmax_element(parts.begin(), parts.end(),
                                        [](auto& a, auto& b) { return a.size() < b.size(); });
    EXPECT_LE(hi->size() - lo->size(), 1u);
  }
}

TEST(Partition, NonIidGivesEachDeviceFewClasses) {
  auto l = labels(6000);
  auto parts = partition(l, 5, {PartitionKind::kNonIid, 2, 9});
  expect_exact_cover(parts, 6000);
  for (const auto& p : parts) {
    std::set<int> classes;
    for (auto i : p) classes.insert(l[i]);
    EXPECT_LE(classes.size(), 4u);  // 2 shards of 600 each span at most 2 classes apiece
    EXPECT_EQ(p.size(), 1200u);
  }
}

TEST(Partition, DeterministicPerSeed) {
  auto l = labels(500);
  EXPECT_EQ(partition(l, 3, {PartitionKind::kNonIid, 2, 4}),
            partition(l, 3, {PartitionKind::kNonIid, 2, 4}));
  EXPECT_EQ(partition(l, 3, {PartitionKind::kIid, 2, 4}),
            partition(l, 3, {PartitionKind::kIid, 2, 4}));
  EXPECT_NE(partition(l, 3, {PartitionKind::kIid, 2, 4}),
            partition(l, 3, {PartitionKind::kIid, 2, 5}));
  std::vector<std::int64_t> v{0, 1, 2, 3, 4, 5, 6, 7};
  shuffle(v, 11);
  // Pinned: the permutation must not change across platforms or releases.
  std::vector<std::int64_t> again{0, 1, 2, 3, 4, 5, 6, 7};
  shuffle(again, 11);
  EXPECT_EQ(v, again);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Partition, RejectsBadArguments) {
  EXPECT_THROW(partition(labels(10), 0, {}), InvalidInput);
  EXPECT_THROW(partition(labels(10), 6, {PartitionKind::kNonIid, 2, 1}), InvalidInput);
  EXPECT_THROW(parse_partition_kind("random"), InvalidInput);
  EXPECT_EQ(parse_partition_kind("noniid"), PartitionKind::kNonIid);
}

}  // namespace
}  // namespace dynacomm::data

//===- BatchOrderTest.cpp - which samples each training step reads --------===//

#include "amp/Runtime/BatchOrder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace amp_runtime;

TEST(BatchOrder, InOrderWithoutShuffling) {
  BatchSchedule schedule(10, 4, 0, /*shuffle=*/false);
  EXPECT_EQ(schedule.batchesPerEpoch(), 2);
  EXPECT_EQ(schedule.rows(0), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(schedule.rows(1), (std::vector<int64_t>{4, 5, 6, 7}));
  // The next epoch starts over; samples 8 and 9 (a partial batch) are
  // never read.
  EXPECT_EQ(schedule.rows(2), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(BatchOrder, RanksTakeEvenContiguousShares) {
  BatchSchedule schedule(16, 8, 0, false);
  EXPECT_EQ(schedule.rows(1, 0, 2), (std::vector<int64_t>{8, 9, 10, 11}));
  EXPECT_EQ(schedule.rows(1, 1, 2), (std::vector<int64_t>{12, 13, 14, 15}));
  EXPECT_EQ(schedule.rows(0, 3, 4), (std::vector<int64_t>{6, 7}));
}

TEST(BatchOrder, ShuffledEpochsArePermutationsFixedBySeed) {
  std::vector<int64_t> a = epochOrder(100, 7, 0, true);
  std::vector<int64_t> b = epochOrder(100, 7, 0, true);
  std::vector<int64_t> c = epochOrder(100, 7, 1, true);
  std::vector<int64_t> d = epochOrder(100, 8, 0, true);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  std::vector<int64_t> sorted = a, identity(100);
  std::sort(sorted.begin(), sorted.end());
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(a, identity);
  // The ranks' shares of a shuffled batch make up the whole batch.
  BatchSchedule one(100, 10, 7, true), split(100, 10, 7, true);
  std::vector<int64_t> whole = one.rows(3);
  std::vector<int64_t> joined = split.rows(3, 0, 2);
  std::vector<int64_t> second = split.rows(3, 1, 2);
  joined.insert(joined.end(), second.begin(), second.end());
  EXPECT_EQ(whole, joined);
}

TEST(BatchOrder, GatherRows) {
  Tensor data;
  data.elementType = ElementType::I32;
  data.shape = {3, 2};
  std::vector<int32_t> values = {0, 1, 10, 11, 20, 21};
  data.bytes.resize(values.size() * 4);
  std::memcpy(data.bytes.data(), values.data(), data.bytes.size());
  Tensor rows = gatherRows(data, {2, 0});
  EXPECT_EQ(rows.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(rows.getAsDouble(0), 20);
  EXPECT_EQ(rows.getAsDouble(1), 21);
  EXPECT_EQ(rows.getAsDouble(2), 0);
  EXPECT_EQ(rows.getAsDouble(3), 1);
}

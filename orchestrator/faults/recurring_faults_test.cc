#include "orchestrator/faults/recurring_faults.h"

#include <set>

#include <gtest/gtest.h>

#include "orchestrator/faults/occurrence_name.h"

namespace collide::orchestrator::faults {
namespace {

using std::chrono::nanoseconds;
using std::chrono::seconds;

v1::Fault recurring_flap(uint64_t mtbf_ns, uint64_t repair_ns) {
  v1::Fault f;
  f.set_name("spine-flap");
  f.set_kind(v1::Fault::KIND_LINK_FLAP);
  f.set_link("leaf0-spine1");
  f.set_mtbf_ns(mtbf_ns);
  f.set_duration_ns(repair_ns);
  return f;
}

std::vector<uint64_t> starts(const Occurrences& o) {
  std::vector<uint64_t> out;
  for (const v1::Fault& f : o.faults) out.push_back(f.start_ns());
  return out;
}

TEST(RecurringFaultsTest, AFaultWithoutMtbfActsOnceAsWritten) {
  v1::Fault f = recurring_flap(0, 200'000'000);
  f.set_start_ns(5);
  const Occurrences o = draw_occurrences(f, 7, 3, seconds(600));
  ASSERT_EQ(o.faults.size(), 1u);
  EXPECT_EQ(o.faults[0].SerializeAsString(), f.SerializeAsString());
  EXPECT_FALSE(o.capped);
}

TEST(RecurringFaultsTest, TheSameSeedAndRepetitionDrawTheSameOccurrencesAndOthersDrawOthers) {
  const v1::Fault f = recurring_flap(2'000'000'000, 100'000'000);
  const Occurrences a = draw_occurrences(f, 42, 3, seconds(10));
  ASSERT_FALSE(a.faults.empty());
  EXPECT_EQ(starts(a), starts(draw_occurrences(f, 42, 3, seconds(10))));
  EXPECT_NE(starts(a), starts(draw_occurrences(f, 42, 4, seconds(10))));
  EXPECT_NE(starts(a), starts(draw_occurrences(f, 43, 3, seconds(10))));
  // Two faults that share a seed (0 unless set) still come at different times.
  v1::Fault other = f;
  other.set_name("other-flap");
  EXPECT_NE(starts(a), starts(draw_occurrences(other, 42, 3, seconds(10))));
}

TEST(RecurringFaultsTest, TheDrawsArePinnedSoASoakReplaysOnAnyMachine) {
  // mt19937_64 is fully specified and the gaps are its bits through the exponential's inverse
  // distribution function: these values hold with any standard library (an implementation of
  // the generator written apart from this one, in Python, gives the same).
  const Occurrences o = draw_occurrences(recurring_flap(1'000'000'000, 50'000'000), 1, 0, seconds(3));
  EXPECT_EQ(starts(o), (std::vector<uint64_t>{352'768'528, 1'725'022'560}));
}

TEST(RecurringFaultsTest, OccurrencesFollowOneAnotherEachWithItsWindowNameAndSeed) {
  v1::Fault f = recurring_flap(300'000'000, 100'000'000);
  f.set_start_ns(1'000'000'000);
  f.set_seed(9);
  const Occurrences o = draw_occurrences(f, 0, 0, seconds(3));
  ASSERT_GE(o.faults.size(), 2u);
  std::set<uint64_t> seeds;
  uint64_t free_from = f.start_ns();
  for (size_t k = 0; k < o.faults.size(); ++k) {
    const v1::Fault& occurrence = o.faults[k];
    EXPECT_EQ(occurrence.name(), "spine-flap#" + std::to_string(k + 1));
    EXPECT_EQ(fault_of_occurrence(occurrence.name()), "spine-flap");
    // A link failure's phase of an occurrence adds up under the fault's phase.
    EXPECT_EQ(fault_of_occurrence(occurrence.name() + "/detection"), "spine-flap/detection");
    EXPECT_EQ(occurrence.mtbf_ns(), 0u) << "an occurrence is a fault that acts once";
    EXPECT_EQ(occurrence.duration_ns(), 100'000'000u);
    EXPECT_EQ(occurrence.kind(), v1::Fault::KIND_LINK_FLAP);
    EXPECT_GT(occurrence.start_ns(), free_from) << "occurrence " << k + 1 << " overlaps the one before";
    EXPECT_LT(occurrence.start_ns(), 3'000'000'000u);
    free_from = occurrence.start_ns() + occurrence.duration_ns();
    seeds.insert(occurrence.seed());
  }
  EXPECT_EQ(seeds.size(), o.faults.size()) << "each occurrence draws its own packets";
}

TEST(RecurringFaultsTest, GapsAreExponentialWithTheMtbfAsTheirMean) {
  // 1000 runs' first kMaxOccurrencesPerRun gaps (the horizon is far beyond them, so none is cut
  // short): 8000 gaps of mean 10 s, whose mean has a standard error of 0.11 s. The draws are
  // seeded, so the result is the same every time; the bounds are over 3 standard errors wide.
  const v1::Fault f = recurring_flap(10'000'000'000, 1'000'000);
  double sum_s = 0;
  size_t gaps = 0, shorter_than_mean = 0;
  for (uint32_t rep = 0; rep < 1000; ++rep) {
    uint64_t free_from = 0;
    for (const v1::Fault& o : draw_occurrences(f, 11, rep, seconds(100'000)).faults) {
      const double gap_s = static_cast<double>(o.start_ns() - free_from) / 1e9;
      sum_s += gap_s;
      shorter_than_mean += gap_s < 10.0 ? 1 : 0;
      free_from = o.start_ns() + o.duration_ns();
      ++gaps;
    }
  }
  ASSERT_EQ(gaps, 1000 * kMaxOccurrencesPerRun);
  EXPECT_NEAR(sum_s / static_cast<double>(gaps), 10.0, 0.4);
  // An exponential gap is shorter than its mean with probability 1 - 1/e = 0.632 (a fixed gap
  // never would be, a uniform one half the time).
  EXPECT_NEAR(static_cast<double>(shorter_than_mean) / static_cast<double>(gaps), 0.632, 0.02);
}

TEST(RecurringFaultsTest, ARunThatWouldHoldMoreThanTheMostSaysWhereItsDrawsStop) {
  const Occurrences o = draw_occurrences(recurring_flap(100'000'000, 10'000'000), 5, 0, seconds(600));
  EXPECT_EQ(o.faults.size(), kMaxOccurrencesPerRun);
  EXPECT_TRUE(o.capped);
  const v1::Fault& last = o.faults.back();
  EXPECT_GT(o.drawn_until, nanoseconds(last.start_ns() + last.duration_ns()));
  EXPECT_LT(o.drawn_until, seconds(600));

  const Occurrences few = draw_occurrences(recurring_flap(100'000'000'000, 10'000'000), 5, 0, seconds(1));
  EXPECT_FALSE(few.capped);
  EXPECT_EQ(few.drawn_until, seconds(1));
}

}  // namespace
}  // namespace collide::orchestrator::faults

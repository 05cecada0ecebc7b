#include "traces/synth/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace collide::traces::synth {
namespace {

// "F3" forward of micro-batch 3, "B3" backward; "sf/rf" send/recv activations, "sb/rb" gradients;
// steps of one group in parentheses.
std::string render(const std::vector<PipeStep>& steps) {
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const PipeStep& s = steps[i];
    const char* name = "";
    switch (s.action) {
      case PipeAction::kForward:
        name = "F";
        break;
      case PipeAction::kBackward:
        name = "B";
        break;
      case PipeAction::kSendForward:
        name = "sf";
        break;
      case PipeAction::kRecvForward:
        name = "rf";
        break;
      case PipeAction::kSendBackward:
        name = "sb";
        break;
      case PipeAction::kRecvBackward:
        name = "rb";
        break;
    }
    const bool opens = s.group != 0 && (i == 0 || steps[i - 1].group != s.group);
    const bool closes = s.group != 0 && (i + 1 == steps.size() || steps[i + 1].group != s.group);
    if (!out.empty()) out += ' ';
    if (opens) out += '(';
    out += name + std::to_string(s.micro_batch);
    if (closes) out += ')';
  }
  return out;
}

TEST(OneFOneB, FirstStageWarmsUpThenDrainsGradients) {
  EXPECT_EQ(render(one_f_one_b(0, 4, 6)),
            "F0 sf0 F1 sf1 F2 sf2 F3 (sf3 rb0) B0 F4 (sf4 rb1) B1 F5 (sf5 rb2) B2 "
            "rb3 B3 rb4 B4 rb5 B5");
}

TEST(OneFOneB, MiddleStage) {
  EXPECT_EQ(render(one_f_one_b(1, 4, 6)),
            "rf0 F0 sf0 rf1 F1 sf1 rf2 F2 (sf2 rb0) B0 (sb0 rf3) F3 (sf3 rb1) B1 (sb1 rf4) "
            "F4 (sf4 rb2) B2 (sb2 rf5) F5 (sf5 rb3) B3 sb3 rb4 B4 sb4 rb5 B5 sb5");
}

TEST(OneFOneB, LastStageAlternatesFromTheStart) {
  EXPECT_EQ(render(one_f_one_b(3, 4, 6)),
            "rf0 F0 B0 (sb0 rf1) F1 B1 (sb1 rf2) F2 B2 (sb2 rf3) F3 B3 (sb3 rf4) F4 B4 "
            "(sb4 rf5) F5 B5 sb5");
}

TEST(OneFOneB, FewerMicroBatchesThanStages) {
  EXPECT_EQ(render(one_f_one_b(0, 4, 2)), "F0 sf0 F1 sf1 rb0 B0 rb1 B1");
  EXPECT_EQ(render(one_f_one_b(2, 4, 2)), "rf0 F0 sf0 rf1 F1 (sf1 rb0) B0 sb0 rb1 B1 sb1");
}

TEST(OneFOneB, SingleStageHasNoCommunication) {
  EXPECT_EQ(render(one_f_one_b(0, 1, 3)), "F0 B0 F1 B1 F2 B2");
}

TEST(OneFOneB, EveryMicroBatchRunsForwardThenBackwardOnce) {
  for (uint32_t stages : {1u, 2u, 3u, 8u}) {
    for (uint32_t mbs : {1u, 2u, 5u, 16u}) {
      for (uint32_t stage = 0; stage < stages; ++stage) {
        std::vector<int> forward_at(mbs, -1), backward_at(mbs, -1);
        uint32_t sends_forward = 0, recvs_forward = 0, sends_backward = 0, recvs_backward = 0;
        const auto steps = one_f_one_b(stage, stages, mbs);
        for (size_t i = 0; i < steps.size(); ++i) {
          const PipeStep& s = steps[i];
          switch (s.action) {
            case PipeAction::kForward:
              EXPECT_EQ(forward_at[s.micro_batch], -1);
              forward_at[s.micro_batch] = static_cast<int>(i);
              break;
            case PipeAction::kBackward:
              EXPECT_EQ(backward_at[s.micro_batch], -1);
              backward_at[s.micro_batch] = static_cast<int>(i);
              break;
            case PipeAction::kSendForward:
              ++sends_forward;
              break;
            case PipeAction::kRecvForward:
              ++recvs_forward;
              break;
            case PipeAction::kSendBackward:
              ++sends_backward;
              break;
            case PipeAction::kRecvBackward:
              ++recvs_backward;
              break;
          }
        }
        for (uint32_t mb = 0; mb < mbs; ++mb) {
          EXPECT_GE(forward_at[mb], 0);
          EXPECT_GT(backward_at[mb], forward_at[mb]);
        }
        const bool first = stage == 0, last = stage + 1 == stages;
        EXPECT_EQ(sends_forward, last ? 0 : mbs);
        EXPECT_EQ(recvs_backward, last ? 0 : mbs);
        EXPECT_EQ(recvs_forward, first ? 0 : mbs);
        EXPECT_EQ(sends_backward, first ? 0 : mbs);
      }
    }
  }
}

}  // namespace
}  // namespace collide::traces::synth

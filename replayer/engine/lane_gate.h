#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace collide::replayer::engine {

// One rank's ops split over the lanes of its NIC (one engine per queue, each running the channels
// of its lane: collectives/channel_lanes.h). NCCL runs a rank's ops one after another on its
// stream, all channels of an op together, so a lane must not start the rank's next op before
// every lane has finished the one before: each lane counts the batches it finished here, and
// starts batch b once every lane has finished b. Lock-free: lanes run on threads of their own.
class LaneGate {
 public:
  explicit LaneGate(uint32_t lanes)
      : lanes_(lanes), finished_(std::make_unique<std::atomic<uint64_t>[]>(lanes)) {
    for (uint32_t i = 0; i < lanes; ++i) finished_[i].store(0, std::memory_order_relaxed);
  }

  void finished_batch(uint32_t lane) { finished_[lane].fetch_add(1, std::memory_order_release); }

  // Whether every lane has finished at least `batches` batches.
  bool all_finished(uint64_t batches) const {
    for (uint32_t i = 0; i < lanes_; ++i) {
      if (finished_[i].load(std::memory_order_acquire) < batches) return false;
    }
    return true;
  }

 private:
  uint32_t lanes_;
  std::unique_ptr<std::atomic<uint64_t>[]> finished_;
};

// Which lane of its NIC a rank's runner is (collectives::lane_of_channel), and its gate (none
// with one lane).
struct RankLane {
  uint32_t index = 0;
  uint32_t count = 1;
  uint32_t nics_per_host = 1;
  LaneGate* gate = nullptr;
};

}  // namespace collide::replayer::engine

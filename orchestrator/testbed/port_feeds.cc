#include "orchestrator/testbed/port_feeds.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include <fmt/format.h>

#include "ebpf/port_feed.h"  // map layout shared with the program
#include "injectors/bpf_log.h"
#include "injectors/tc_link.h"
#include "port_feed.skel.h"

namespace collide::orchestrator::testbed {

static_assert(kMaxFeedIfindex == PORT_FEED_MAX_IFINDEX, "the loader and the program disagree");
static_assert(sizeof(port_feed_count) == 2 * sizeof(uint64_t), "bytes, then frames, unpadded");

namespace {

constexpr size_t kCountsBytes = size_t{PORT_FEED_SLOTS} * PORT_FEED_SLOTS * sizeof(port_feed_count);

size_t mapping_bytes() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (kCountsBytes + page - 1) / page * page;
}

Status check_egress_ports(const std::vector<int>& egress_ifindexes) {
  std::set<int> seen;
  for (int ifindex : egress_ifindexes) {
    if (ifindex <= 0 || ifindex >= kMaxFeedIfindex) {
      return invalid_argument(fmt::format(
          "egress ifindex {} is outside 1..{}, the ports whose feeds are counted apart", ifindex,
          kMaxFeedIfindex - 1));
    }
    if (!seen.insert(ifindex).second) {
      return invalid_argument(fmt::format("egress ifindex {} is given twice", ifindex));
    }
  }
  return {};
}

}  // namespace

struct PortFeeds::Loaded {
  port_feed* skel = nullptr;
  std::vector<injectors::TcLink> links;
  void* mapping = MAP_FAILED;
  ~Loaded() {
    links.clear();  // detach before the program goes
    if (mapping != MAP_FAILED) munmap(mapping, mapping_bytes());
    port_feed__destroy(skel);
  }
};

Result<std::unique_ptr<PortFeeds>> PortFeeds::attach(const std::vector<int>& egress_ifindexes,
                                                     TosMatch lossless) {
  COLLIDE_RETURN_IF_ERROR(check_egress_ports(egress_ifindexes));
  injectors::route_bpf_library_logs();
  std::unique_ptr<PortFeeds> feeds(new PortFeeds());
  feeds->loaded_ = std::make_unique<Loaded>();
  Loaded& loaded = *feeds->loaded_;
  loaded.skel = port_feed__open();
  if (loaded.skel == nullptr) return errno_status(errno, "opening the port feed counter");
  loaded.skel->rodata->tos_mask = lossless.mask;
  loaded.skel->rodata->tos_value = lossless.value;
  if (int rc = port_feed__load(loaded.skel); rc != 0) return errno_status(-rc, "loading the port feed counter");
  loaded.mapping = mmap(nullptr, mapping_bytes(), PROT_READ, MAP_SHARED,
                        bpf_map__fd(loaded.skel->maps.feeds), 0);
  if (loaded.mapping == MAP_FAILED) return errno_status(errno, "mapping the port feed counts");
  const int prog_fd = bpf_program__fd(loaded.skel->progs.port_feed_egress);
  for (int ifindex : egress_ifindexes) {
    auto link = injectors::TcLink::attach(prog_fd, ifindex, injectors::Direction::kEgress);
    if (!link.ok()) {
      return link.status().with_context(
          fmt::format("attaching the port feed counter to ifindex {}", ifindex));
    }
    loaded.links.push_back(std::move(link).value());
  }
  feeds->counts_ = static_cast<const uint64_t*>(loaded.mapping);
  return feeds;
}

PortFeeds::~PortFeeds() = default;

uint64_t PortFeeds::read(int egress_ifindex, int ingress_ifindex, int field) const {
  if (counts_ == nullptr || egress_ifindex <= 0 || egress_ifindex >= kMaxFeedIfindex ||
      ingress_ifindex < 0) {
    return 0;
  }
  const size_t ingress_slot = static_cast<size_t>(std::min(ingress_ifindex, kMaxFeedIfindex));
  const size_t pair = static_cast<size_t>(egress_ifindex) * PORT_FEED_SLOTS + ingress_slot;
  // The program adds atomically; an aligned relaxed load sees each count whole.
  return __atomic_load_n(&counts_[pair * 2 + static_cast<size_t>(field)], __ATOMIC_RELAXED);
}

}  // namespace collide::orchestrator::testbed

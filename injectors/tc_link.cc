#include "injectors/tc_link.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include <fmt/format.h>

#include "common/logging.h"

namespace collide::injectors {
namespace {

// Attach types of TCX links (Linux 6.6). Debian 12's UAPI headers predate them.
constexpr int kBpfTcxIngress = 46;
constexpr int kBpfTcxEgress = 47;

bpf_tc_attach_point tc_attach_point(Direction direction) {
  return direction == Direction::kIngress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
}

}  // namespace

Result<TcLink> TcLink::attach(int prog_fd, int ifindex, Direction direction) {
  TcLink link;
  link.ifindex_ = ifindex;
  link.direction_ = direction;

  const int attach_type = direction == Direction::kIngress ? kBpfTcxIngress : kBpfTcxEgress;
  const int fd = bpf_link_create(prog_fd, ifindex, static_cast<bpf_attach_type>(attach_type),
                                 nullptr);
  if (fd >= 0) {
    link.mode_ = Mode::kTcx;
    link.link_fd_ = fd;
    link.attached_ = true;
    return link;
  }
  const int tcx_error = -fd;
  if (tcx_error != EINVAL && tcx_error != EOPNOTSUPP) {
    return errno_status(tcx_error, fmt::format("creating TCX {} link on ifindex {}",
                                               direction_name(direction), ifindex));
  }

  // The kernel does not know TCX: fall back to a clsact filter.
  logging::get("bpf")->info("TCX unavailable ({}); attaching through tc clsact",
                            std::strerror(tcx_error));
  LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = tc_attach_point(direction));
  if (int rc = bpf_tc_hook_create(&hook); rc != 0 && rc != -EEXIST) {
    return errno_status(-rc, fmt::format("creating clsact on ifindex {}", ifindex));
  }
  LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd, .handle = kCollideTcHandle);
  if (int rc = bpf_tc_attach(&hook, &opts); rc != 0) {
    return errno_status(-rc, fmt::format("attaching tc {} filter on ifindex {}",
                                         direction_name(direction), ifindex));
  }
  link.mode_ = Mode::kClsact;
  link.tc_priority_ = opts.priority;
  link.attached_ = true;
  return link;
}

TcLink::TcLink(TcLink&& other) noexcept { *this = std::move(other); }

TcLink& TcLink::operator=(TcLink&& other) noexcept {
  if (this != &other) {
    detach();
    mode_ = other.mode_;
    ifindex_ = other.ifindex_;
    direction_ = other.direction_;
    link_fd_ = std::exchange(other.link_fd_, -1);
    tc_priority_ = other.tc_priority_;
    attached_ = std::exchange(other.attached_, false);
  }
  return *this;
}

TcLink::~TcLink() { detach(); }

void TcLink::detach() {
  if (!attached_) return;
  attached_ = false;
  if (mode_ == Mode::kTcx) {
    close(link_fd_);  // closing the last reference to a link detaches it
    link_fd_ = -1;
    return;
  }
  LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex_, .attach_point = tc_attach_point(direction_));
  LIBBPF_OPTS(bpf_tc_opts, opts, .handle = kCollideTcHandle, .priority = tc_priority_);
  if (int rc = bpf_tc_detach(&hook, &opts); rc != 0 && rc != -ENOENT && rc != -ENODEV) {
    logging::get("bpf")->warn("detaching tc filter from ifindex {}: {}", ifindex_,
                              std::strerror(-rc));
  }
}

}  // namespace collide::injectors

// collide_nccl_log_gen: writes a large synthetic NCCL_DEBUG=INFO log (one merged stream of many
// ranks) for the import benchmark: version, NET, init and GRAPH lines for a world, TP and DP
// communicators, then mostly COLL lines, with some noise (application output, nccl-tests rows,
// WARN lines, launcher prefixes).
//
//   collide_nccl_log_gen --output big.log [--bytes 1100000000] [--ranks 256] [--tp 8]
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "common/parse_number.h"

namespace {

struct Options {
  std::string output;
  uint64_t bytes = 1100000000ull;
  uint32_t ranks = 256;
  uint32_t tp = 8;
};

int usage() {
  std::fprintf(stderr,
               "usage: collide_nccl_log_gen --output <file> [--bytes N] [--ranks N] [--tp N]\n");
  return 2;
}

struct Rank {
  std::string prefix;  // "host:pid:tid [dev] NCCL INFO "
  std::string launcher;
  uint64_t world_comm, tp_comm, dp_comm;
  uint64_t world_ops = 0, tp_ops = 0, dp_ops = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    const char* value = argv[++i];
    if (arg == "--output") {
      opt.output = value;
    } else if (arg == "--bytes" || arg == "--ranks" || arg == "--tp") {
      auto n = collide::parse_number<uint64_t>(value, arg);
      if (!n.ok() || (arg != "--bytes" && *n > UINT32_MAX)) {
        std::fprintf(stderr, "%s\n", n.ok() ? (arg + " is too large").c_str() : n.status().message().c_str());
        return usage();
      }
      if (arg == "--bytes") opt.bytes = *n;
      if (arg == "--ranks") opt.ranks = static_cast<uint32_t>(*n);
      if (arg == "--tp") opt.tp = static_cast<uint32_t>(*n);
    } else {
      return usage();
    }
  }
  if (opt.output.empty() || opt.tp == 0 || opt.ranks == 0 || opt.ranks % opt.tp != 0)
    return usage();
  std::FILE* out = std::fopen(opt.output.c_str(), "wb");
  if (out == nullptr) {
    std::perror(opt.output.c_str());
    return 1;
  }
  const uint32_t dp = opt.ranks / opt.tp;
  std::vector<Rank> ranks(opt.ranks);
  for (uint32_t r = 0; r < opt.ranks; ++r) {
    const uint32_t node = r / opt.tp;
    const uint32_t pid = 40000 + r * 7;
    ranks[r].prefix =
        fmt::format("gpu-node-{:03}:{}:{} [{}] NCCL INFO ", node, pid, pid + 11, r % opt.tp);
    if (r % 5 == 1) ranks[r].launcher = fmt::format("[1,{}]<stdout>:", r);
    const uint64_t base = 0x55d4a0000000ull + (static_cast<uint64_t>(r % 16) << 20);
    ranks[r].world_comm = base + 0x1a0;
    ranks[r].tp_comm = base + 0x83b0;
    ranks[r].dp_comm = base + 0xf610;
  }
  std::string buf;
  buf.reserve(16u << 20);
  uint64_t written = 0;
  auto flush = [&] {
    std::fwrite(buf.data(), 1, buf.size(), out);
    written += buf.size();
    buf.clear();
  };
  auto line = [&](const Rank& r) -> std::back_insert_iterator<std::string> {
    buf += r.launcher;
    buf += r.prefix;
    return std::back_inserter(buf);
  };
  for (uint32_t r = 0; r < opt.ranks; ++r) {
    fmt::format_to(line(ranks[r]), "NCCL version 2.18.3+cuda12.2\n");
    fmt::format_to(line(ranks[r]),
                   "NET/IB : Using [0]mlx5_{}:1/RoCE [RO]; OOB eth0:10.1.{}.{}<0>\n", r % opt.tp,
                   r / opt.tp, r % opt.tp + 1);
  }
  // World: ring order from rank 0, neighbours and trees from everyone, then the init lines.
  fmt::format_to(line(ranks[0]), "Channel 00/02 :");
  for (uint32_t r = 0; r < opt.ranks && r < 20; ++r)
    fmt::format_to(std::back_inserter(buf), " {:>3}", r);
  buf += "\n";
  for (uint32_t r = 0; r < opt.ranks; ++r) {
    const uint32_t n = opt.ranks;
    fmt::format_to(line(ranks[r]), "Ring 00 : {} -> {} -> {}\n", (r + n - 1) % n, r, (r + 1) % n);
    fmt::format_to(line(ranks[r]), "Trees [0] {}/-1/-1->{}->{}\n",
                   r + 1 < n ? static_cast<int>(r + 1) : -1, r, static_cast<int>(r) - 1);
    fmt::format_to(line(ranks[r]),
                   "comm {:#x} rank {} nranks {} cudaDev {} nvmlDev {} busId {:x}000 commId "
                   "0x5e1ec7ab1e - Init COMPLETE\n",
                   ranks[r].world_comm, r, n, r % opt.tp, r % opt.tp, 0x10 + r % opt.tp);
  }
  for (uint32_t r = 0; r < opt.ranks; ++r) {
    fmt::format_to(line(ranks[r]),
                   "comm {:#x} rank {} nranks {} cudaDev {} busId {:x}000 - Init COMPLETE\n",
                   ranks[r].tp_comm, r % opt.tp, opt.tp, r % opt.tp, 0x10 + r % opt.tp);
  }
  for (uint32_t r = 0; r < opt.ranks; ++r) {
    fmt::format_to(line(ranks[r]),
                   "comm {:#x} rank {} nranks {} cudaDev {} busId {:x}000 - Init COMPLETE\n",
                   ranks[r].dp_comm, r / opt.tp, dp, r % opt.tp, 0x10 + r % opt.tp);
  }
  std::mt19937_64 rng(42);
  uint64_t step = 0;
  uint64_t noise = 0;
  while (written + buf.size() < opt.bytes) {
    const uint32_t kind = static_cast<uint32_t>(rng() % 10);
    const uint64_t count = (1ull << (10 + rng() % 16)) + (rng() % 4) * 256;
    for (uint32_t r = 0; r < opt.ranks; ++r) {
      Rank& rank = ranks[r];
      const uint64_t buffer = 0x7f3a00000000ull + ((step * 4096 + r) & 0xffffff) * 0x1000;
      if (kind < 4) {
        fmt::format_to(line(rank),
                       "AllReduce: opCount {:x} sendbuff {:#x} recvbuff {:#x} count {} datatype 9 "
                       "op 0 root 0 comm {:#x} [nranks={}] stream 0x55d4b3c1e0a0\n",
                       rank.dp_ops++, buffer, buffer, count, rank.dp_comm, dp);
      } else if (kind < 6) {
        fmt::format_to(line(rank),
                       "AllGather: opCount {:x} sendbuff {:#x} recvbuff {:#x} count {} datatype 9 "
                       "op 0 root 0 comm {:#x} [nranks={}] stream 0x55d4b3c1e0a0\n",
                       rank.tp_ops++, buffer, buffer + 0x40000, count, rank.tp_comm, opt.tp);
      } else if (kind < 8) {
        fmt::format_to(line(rank),
                       "ReduceScatter: opCount {:x} sendbuff {:#x} recvbuff {:#x} count {} "
                       "datatype 7 op 0 root 0 comm {:#x} [nranks={}] stream 0x55d4b3c1e0a0\n",
                       rank.tp_ops++, buffer, buffer + 0x40000, count, rank.tp_comm, opt.tp);
      } else if (kind < 9) {
        fmt::format_to(line(rank),
                       "Broadcast: opCount {:x} sendbuff {:#x} recvbuff {:#x} count {} datatype 1 "
                       "op 0 root 0 comm {:#x} [nranks={}] stream 0x55d4b3c1e0a0\n",
                       rank.world_ops++, buffer, buffer, count, rank.world_comm, opt.ranks);
      } else {
        // Pipeline-style exchange with the neighbours in the world, grouped (one opCount).
        const uint32_t n = opt.ranks;
        fmt::format_to(line(rank),
                       "Send: opCount {:x} sendbuff (nil) recvbuff {:#x} count {} datatype 9 op 0 "
                       "root {} comm {:#x} [nranks={}] stream 0x55d4b3c1e0a0\n",
                       rank.world_ops, buffer, count, (r + 1) % n, rank.world_comm, n);
        fmt::format_to(line(rank),
                       "Recv: opCount {:x} sendbuff (nil) recvbuff {:#x} count {} datatype 9 op 0 "
                       "root {} comm {:#x} [nranks={}] stream 0x55d4b3c1e0a0\n",
                       rank.world_ops++, buffer, count, (r + n - 1) % n, rank.world_comm, n);
      }
      if (++noise % 97 == 0) {
        switch (noise / 97 % 4) {
          case 0:
            buf += "Epoch 3 step 1200: loss 2.3184 lr 1.2e-4 tokens/s 183211\n";
            break;
          case 1:
            fmt::format_to(
                std::back_inserter(buf),
                "    {:>10}  {:>10}  bfloat16  sum  -1  {:>8.1f}  {:>6.2f}  {:>6.2f}  0\n",
                count * 2, count, 123.4 + static_cast<double>(count % 97), 42.1, 78.9);
            break;
          case 2:
            buf += rank.prefix.substr(0, rank.prefix.size() - 10);
            buf += "misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer\n";
            break;
          default:
            fmt::format_to(line(rank), "Channel 01/0 : {}[{}] -> {}[{}] via P2P/IPC/read\n", r,
                           r % opt.tp, (r + 1) % opt.ranks, (r + 1) % opt.tp);
        }
      }
    }
    ++step;
    if (buf.size() > (8u << 20)) flush();
  }
  flush();
  if (std::fclose(out) != 0) {
    std::perror(opt.output.c_str());
    return 1;
  }
  std::printf("wrote %llu bytes, %llu steps of %u ranks to %s\n",
              static_cast<unsigned long long>(written), static_cast<unsigned long long>(step),
              opt.ranks, opt.output.c_str());
  return 0;
}

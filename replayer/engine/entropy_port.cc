#include "replayer/engine/entropy_port.h"

namespace collide::replayer::engine {

uint16_t entropy_port(uint32_t local, uint32_t peer, uint32_t qpn, uint64_t seed) {
  uint32_t h = local * 0x9e3779b1u ^ peer * 0x85ebca6bu ^ qpn * 0xc2b2ae35u;
  if (seed != 0) {
    // SplitMix64 of the seed: neighbouring seeds give unrelated port sets.
    uint64_t z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    h = (h ^ static_cast<uint32_t>(z)) * 0x27d4eb2du;
  }
  h ^= h >> 15;
  // The top two bits set: the dynamic port range, as RoCE NICs use.
  return static_cast<uint16_t>(0xc000 | (h & 0x3fff));
}

}  // namespace collide::replayer::engine

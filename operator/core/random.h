#ifndef BSW_CORE_RANDOM_H_
#define BSW_CORE_RANDOM_H_

#include <cstdint>

namespace bsw {

// A small seeded generator (SplitMix64) whose output is the same on every platform and library,
// unlike the standard distributions. Same seed, same sequence.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1), from the top 53 bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// Mixes two values into one seed, so that (seed, index) pairs give independent streams.
inline uint64_t MixSeed(uint64_t seed, uint64_t index) {
  Random r(seed ^ (index * 0xd1b54a32d192ed03ULL));
  r.Next();
  return r.Next();
}

}  // namespace bsw

#endif  // BSW_CORE_RANDOM_H_

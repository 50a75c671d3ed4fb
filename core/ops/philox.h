// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
// counter-based generator. Block (key, counter) is a pure function, so draw i of a call can be
// computed on any thread, in any order, and the results do not depend on the thread count.
#ifndef KILN_CORE_OPS_PHILOX_H_
#define KILN_CORE_OPS_PHILOX_H_

#include <array>
#include <cmath>
#include <cstdint>

namespace kiln::philox {

// The 32-bit words of Philox4x32, each held in the low half of a 64-bit lane (so that a tile of
// them vectorizes).
inline constexpr uint64_t kLow = 0xFFFFFFFF;

// One round on counter words c0..c3 with key words k0, k1.
inline void Round(uint64_t& c0, uint64_t& c1, uint64_t& c2, uint64_t& c3, uint64_t k0,
                  uint64_t k1) {
  const uint64_t p0 = 0xD2511F53 * c0, p1 = 0xCD9E8D57 * c2;
  const uint64_t n0 = (p1 >> 32) ^ c1 ^ k0, n2 = (p0 >> 32) ^ c3 ^ k1;
  c1 = p1 & kLow;
  c3 = p0 & kLow;
  c0 = n0;
  c2 = n2;
}

// Key words of round r + 1 from those of round r.
inline void BumpKey(uint64_t& k0, uint64_t& k1) {
  k0 = (k0 + 0x9E3779B9) & kLow;
  k1 = (k1 + 0xBB67AE85) & kLow;
}

// The 128 random bits of block (key, counter): ten rounds of Philox4x32 on the counter words
// (lo, hi) = (counter, stream).
inline std::array<uint64_t, 2> Block(uint64_t key, uint64_t counter, uint64_t stream) {
  uint64_t c0 = counter & kLow, c1 = counter >> 32, c2 = stream & kLow, c3 = stream >> 32;
  uint64_t k0 = key & kLow, k1 = key >> 32;
  for (int round = 0; round < 10; ++round, BumpKey(k0, k1)) Round(c0, c1, c2, c3, k0, k1);
  return {c0 | c1 << 32, c2 | c3 << 32};
}

// The words of blocks (key, counter + k, 0) for k in [0, n), n <= 512, as doubles: a[k] in
// (0, 1] from the first word, b[k] in [0, 1) from the second (ToOpenUnit and ToUnit of Block's
// words). The rounds run across the tile, so that the compiler vectorizes them.
// (Out of line, in random_kernels.cc: a target_clones function defined inline in a header gets
// one resolver per translation unit under clang, which the linker refuses as a duplicate.)
void UniformPairs(uint64_t key, uint64_t counter, int n, double* a, double* b);

// A double in [0, 1) from the top 53 bits of a word.
inline double ToUnit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }
// A double in (0, 1]: never 0, so that its log is finite.
inline double ToOpenUnit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 1) * 0x1.0p-53; }

// The words of one draw: blocks (key, counter, 0), (key, counter, 1), ... in turn. Each element
// of a call owns one counter, so a rejection sampler may take as many words as it needs.
class Stream {
 public:
  Stream(uint64_t key, uint64_t counter) : key_(key), counter_(counter) {}
  uint64_t Next() {
    if (used_ == 2) {
      words_ = Block(key_, counter_, block_++);
      used_ = 0;
    }
    return words_[used_++];
  }
  double Uniform() { return ToUnit(Next()); }       // [0, 1)
  double OpenUniform() { return ToOpenUnit(Next()); }  // (0, 1]
  // A standard normal (Box-Muller; the second value is dropped to keep draws independent).
  double Normal() {
    const double r = std::sqrt(-2.0 * std::log(OpenUniform()));
    return r * std::cos(2 * M_PI * Uniform());
  }

 private:
  uint64_t key_, counter_, block_ = 0;
  std::array<uint64_t, 2> words_{};
  int used_ = 2;
};

}  // namespace kiln::philox

#endif  // KILN_CORE_OPS_PHILOX_H_

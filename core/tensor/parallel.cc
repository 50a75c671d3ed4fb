#include "core/tensor/parallel.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

// The pool: NumThreads() - 1 workers and a few job slots. A caller takes a free slot, publishes
// its job there (the function, n, and a claim word handing out fixed chunks), runs chunks itself,
// and waits until every chunk is done. Workers and waiting callers spin for a bounded time
// (kSpin) before they sleep on a futex, so that the short back-to-back jobs of batch-1 networks
// find the workers awake instead of paying a wake-up from sleep (12-16 µs here) on every call.
//
// Why it has no data race: a job's plain fields (fn, n) are written by the slot's owner before
// the release store of the claim word, and read by a worker only after its compare-and-swap on
// that word has claimed a chunk of that job (the word holds the job's number, so a worker that
// read an older job's word fails the swap). The owner returns only once `done` counts every
// chunk, and a worker adds its chunks to `done` only after running them: so while anyone runs a
// chunk of a job, its owner has not returned and the slot has not been reused. Sleeps cannot miss
// a wake-up: a sleeper announces itself (seq_cst) before the futex re-checks the word it waits on,
// and the waker changes that word (seq_cst) before it looks for sleepers.

namespace kiln {
namespace {

int ConfiguredThreads() {
  if (const char* env = std::getenv("KILN_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// Chunks per thread: enough that a slowed thread's share is taken over by the others.
constexpr int64_t kChunksPerThread = 8;

// Chunks of one job at most: the claim word holds the count and the next chunk in 16 bits each.
constexpr int64_t kMaxChunks = 0xFFFF;

// Jobs in flight at once (callers on different threads, or a call nested in a caller's chunk); a
// caller that finds every slot taken runs its chunks alone, the cores being busy anyway.
constexpr int kSlots = 8;

// How long a worker with nothing to do, or a caller waiting for its chunks, spins before it
// sleeps. Waking a sleeping thread costs 12-16 µs here, so spinning about as long as a wake-up
// costs bounds the waste at 2x (the classic spin-then-block bound); 50 µs (3-4 wake-ups) also
// spans the serial gaps between one op's ParallelFor and the next in a batch-1 network (tens of
// µs), so the workers stay awake through a forward pass. The CPU it takes is bounded: a worker
// spins at most 50 µs after each job, i.e. at most 5% of a core for a job every millisecond and
// none once the jobs stop (LLVM's OpenMP runtime spins 200 ms by default).
constexpr std::chrono::microseconds kSpin{50};

// How often a spinning thread yields its core. A woken worker can land on its waker's core
// (when the other cores are busy) and preempts it; without yielding it would spin there through
// its whole budget while the thread it waits for is the one it keeps off the core (measured on a
// loaded 2-core machine: the waker's futex wake took 65 µs on average, 5-8 µs with the yield).
constexpr std::chrono::microseconds kYieldEvery{4};

// The spin budget: none when there are more threads than cores (KILN_NUM_THREADS set above the
// core count), where a spinning thread would take the core that the thread it waits for needs.
std::chrono::microseconds SpinBudget() {
  static const std::chrono::microseconds budget =
      NumThreads() <= static_cast<int>(std::thread::hardware_concurrency())
          ? kSpin
          : std::chrono::microseconds{0};
  return budget;
}

// Tells the core that this is a spin-wait loop (frees the sibling hyperthread, saves power).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until done() holds or the spin budget has passed; returns done()'s last value.
template <typename Done>
bool SpinUntil(Done done) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + SpinBudget();
  Clock::time_point next_yield = start + kYieldEvery;
  for (int i = 1;; ++i) {
    if (done()) return true;
    CpuRelax();
    if (i % 16 == 0) {
      const Clock::time_point now = Clock::now();
      if (now >= deadline) return done();
      if (now >= next_yield) {
        std::this_thread::yield();
        next_yield = now + kYieldEvery;
      }
    }
  }
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
              std::atomic<uint32_t>::is_always_lock_free);

// Sleeps while *word holds `expected` (returns at once if it does not; may return spuriously).
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
#else
  word->wait(expected);
#endif
}

// Wakes up to `count` threads sleeping in FutexWait on `word`.
void FutexWake(std::atomic<uint32_t>* word, int count) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr,
          0);
#else
  (void)count;
  word->notify_all();
#endif
}

using Fn = absl::FunctionRef<void(int64_t, int64_t)>;

// One job in flight: written by its owner (the caller), its chunks claimed by anyone.
struct alignas(64) Slot {
  std::atomic<uint64_t> claim{0};  // job number << 32 | chunks << 16 | next chunk to hand out
  std::atomic<uint32_t> done{0};   // chunks finished; the owner sleeps on it
  std::atomic<uint32_t> owner_asleep{0};  // 1 while the owner sleeps on `done`
  std::atomic<bool> busy{false};          // a caller owns the slot
  uint32_t job = 0;                       // the owner's last job number
  const Fn* fn = nullptr;                 // the job's function (valid while a chunk is claimed)
  int64_t n = 0;                          // the job's range [0, n)
};

// Claims the next chunk of the slot's job: its index (and the job's chunk count), or -1.
int64_t TryClaim(Slot& slot, uint32_t* chunks) {
  uint64_t word = slot.claim.load(std::memory_order_acquire);
  for (;;) {
    *chunks = (word >> 16) & 0xFFFF;
    const uint32_t next = word & 0xFFFF;
    if (next >= *chunks) return -1;
    if (slot.claim.compare_exchange_weak(word, word + 1, std::memory_order_acquire,
                                         std::memory_order_acquire)) {
      return next;
    }
  }
}

// Runs chunks of the slot's job until none is left to claim, then counts them done (waking the
// owner if it sleeps and these were the last). Returns whether it ran any.
bool RunChunks(Slot& slot) {
  uint32_t chunks = 0;
  int64_t c = TryClaim(slot, &chunks);
  if (c < 0) return false;
  const Fn& fn = *slot.fn;
  const int64_t n = slot.n;
  uint32_t ran = 0;
  do {
    fn(n * c / chunks, n * (c + 1) / chunks);
    ++ran;
  } while ((c = TryClaim(slot, &chunks)) >= 0);
  // After this add the job may be over and the slot reused: only atomics are touched below, and a
  // wake-up that reaches the slot's next owner is a spurious one, which it tolerates.
  if (slot.done.fetch_add(ran) + ran == chunks && slot.owner_asleep.load() != 0) {
    FutexWake(&slot.done, 1);
  }
  return true;
}

// True on the pool's workers: a ParallelFor there runs inline.
thread_local bool t_on_worker = false;

class Pool {
 public:
  // Starts `workers` threads; they live until the process exits.
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) std::thread([this] { Work(); }).detach();
  }

  // A free slot, now owned by the caller, or nullptr if every slot is taken.
  Slot* Acquire() {
    for (Slot& slot : slots_) {
      if (!slot.busy.load(std::memory_order_relaxed) &&
          !slot.busy.exchange(true, std::memory_order_acquire)) {
        return &slot;
      }
    }
    return nullptr;
  }

  // Hands out `chunks` chunks of fn over [0, n) from the owned slot and wakes sleeping workers.
  void Publish(Slot& slot, const Fn& fn, int64_t n, uint32_t chunks) {
    slot.fn = &fn;
    slot.n = n;
    slot.done.store(0, std::memory_order_relaxed);
    slot.claim.store(uint64_t{++slot.job} << 32 | uint64_t{chunks} << 16,
                     std::memory_order_release);
    jobs_.fetch_add(1);
    if (sleepers_.load() != 0) FutexWake(&jobs_, static_cast<int>(chunks - 1));
  }

  // Waits until every chunk of the owned slot's job is done, then gives the slot back.
  static void Finish(Slot& slot, uint32_t chunks) {
    if (!SpinUntil([&] { return slot.done.load(std::memory_order_acquire) == chunks; })) {
      slot.owner_asleep.store(1);
      for (uint32_t done; (done = slot.done.load()) != chunks;) FutexWait(&slot.done, done);
      slot.owner_asleep.store(0, std::memory_order_relaxed);
    }
    slot.busy.store(false, std::memory_order_release);
  }

 private:
  // A worker's life: run what the slots offer; spin, then sleep, until another job is published.
  void Work() {
    t_on_worker = true;
    for (;;) {
      // Read before the scan: a job published after it changes jobs_, so it is not slept through.
      const uint32_t seen = jobs_.load(std::memory_order_acquire);
      for (Slot& slot : slots_) RunChunks(slot);
      if (SpinUntil([&] { return jobs_.load(std::memory_order_relaxed) != seen; })) continue;
      sleepers_.fetch_add(1);
      while (jobs_.load() == seen) FutexWait(&jobs_, seen);
      sleepers_.fetch_sub(1);
    }
  }

  std::array<Slot, kSlots> slots_;
  alignas(64) std::atomic<uint32_t> jobs_{0};  // jobs published so far (mod 2^32)
  std::atomic<uint32_t> sleepers_{0};          // workers asleep (or about to be) on jobs_
};

// The pool, deliberately leaked (its workers run until exit), or nullptr on one thread.
Pool* GetPool() {
  static Pool* pool = NumThreads() > 1 ? new Pool(NumThreads() - 1) : nullptr;
  return pool;
}

}  // namespace

int NumThreads() {
  static const int n = ConfiguredThreads();
  return n;
}

void ParallelFor(int64_t n, int64_t min_chunk, absl::FunctionRef<void(int64_t, int64_t)> fn) {
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk));
  const int threads = static_cast<int>(std::min<int64_t>(NumThreads(), max_chunks));
  Pool* pool = GetPool();
  if (threads <= 1 || pool == nullptr || t_on_worker) {
    if (n > 0) fn(0, n);  // small work, one core, or already on a worker: run inline
    return;
  }
  // Fixed chunks, handed out in order to whichever thread is free: a core slowed by other work
  // (a shared machine's neighbours) takes fewer of them instead of holding up the call.
  const auto chunks = static_cast<uint32_t>(
      std::min({max_chunks, int64_t{threads} * kChunksPerThread, kMaxChunks}));
  Slot* slot = pool->Acquire();
  if (slot == nullptr) {  // every slot is taken by other callers: run the same chunks here
    for (int64_t c = 0; c < chunks; ++c) fn(n * c / chunks, n * (c + 1) / chunks);
    return;
  }
  pool->Publish(*slot, fn, n, chunks);
  RunChunks(*slot);
  Pool::Finish(*slot, chunks);
}

}  // namespace kiln

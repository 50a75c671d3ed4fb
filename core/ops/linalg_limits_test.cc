// The linear-algebra, Blockwise and special-function kernels under a call's limits: hostile sizes
// (a 10^6-square matrix, a batch of 2^40 items) are refused before anything is allocated, with
// RESOURCE_EXHAUSTED naming the op and the shapes and without minutes of work; long runs (a
// special function summing 10^6 terms an element, a Blockwise of 10^5 Choleskys) stop soon after
// the call's interrupt fires, with its status.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/kiln.h"
#include "core/ops/blockwise.h"
#include "core/ops/nlinalg.h"
#include "core/ops/nlinalg_decomp.h"
#include "core/ops/slinalg.h"
#include "core/ops/slinalg_matfun.h"
#include "core/ops/special_fns.h"
#include "core/ops/special_scalar.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/parallel.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// function(in, out) run on args: its outputs or its status.
absl::StatusOr<std::vector<Tensor>> RunGraph(const std::vector<Var>& in,
                                             const std::vector<Var>& out,
                                             std::vector<Tensor> args) {
  auto f = function(in, out, {.on_unused_input = OnUnusedInput::kIgnore});
  if (!f.ok()) return f.status();
  return (*f)(std::move(args));
}

// `value` seen as a tensor of `shape` (every stride 0): a hostile size that costs no memory.
Tensor Broadcast(double value, const Shape& shape) {
  const Tensor one = *Tensor::FromValues<double>(DType::kFloat64, {}, std::vector<double>{value});
  return *one.BroadcastTo(shape);
}

// An interrupt that returns DEADLINE_EXCEEDED once `seconds` have passed since it was made.
std::function<absl::Status()> DeadlineAfter(double seconds) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  return [deadline] {
    return Clock::now() > deadline ? absl::DeadlineExceededError("the call's deadline passed")
                                   : absl::OkStatus();
  };
}

constexpr int64_t kHuge = 1000000;  // a 10^6-square float64 matrix: 8 TB

// Each linalg op of a matrix x (and a vector b where it solves), by name.
struct LinalgCase {
  std::string name;
  std::function<Var(const Var& x, const Var& b)> build;
};

std::vector<LinalgCase> LinalgCases() {
  return {
      {"cholesky", [](const Var& x, const Var&) { return cholesky(x); }},
      {"solve", [](const Var& x, const Var& b) { return solve(x, b); }},
      {"solve pos", [](const Var& x, const Var& b) { return solve(x, b, "pos"); }},
      {"solve_triangular", [](const Var& x, const Var& b) { return solve_triangular(x, b); }},
      {"cho_solve", [](const Var& x, const Var& b) { return cho_solve(x, true, b); }},
      {"eigvalsh", [](const Var& x, const Var&) { return eigvalsh(x); }},
      {"expm", [](const Var& x, const Var&) { return expm(x); }},
      {"matrix_inverse", [](const Var& x, const Var&) { return matrix_inverse(x); }},
      {"det", [](const Var& x, const Var&) { return det(x); }},
      {"slogdet", [](const Var& x, const Var&) { return slogdet(x)[1]; }},
      {"pinv", [](const Var& x, const Var&) { return pinv(x); }},
      {"pinv hermitian", [](const Var& x, const Var&) { return pinv(x, true); }},
      {"eig", [](const Var& x, const Var&) { return eig(x)[0]; }},
      {"eigh", [](const Var& x, const Var&) { return eigh(x)[0]; }},
      {"svd", [](const Var& x, const Var&) { return svd(x)[1]; }},
      {"svd values", [](const Var& x, const Var&) { return svd(x, false, false)[0]; }},
      {"qr", [](const Var& x, const Var&) { return qr(x)[1]; }},
  };
}

// Runs every case on an n-square matrix (declared with a static shape or not) and a vector of n,
// both broadcast from one element; each is refused with RESOURCE_EXHAUSTED whose message
// contains `words` and the matrix's shape, within a second.
void ExpectEveryLinalgOpRefused(int64_t n, const std::string& words) {
  const std::string shape = absl::StrCat("(", n, ", ", n, ")");
  for (bool declared : {false, true}) {
    for (const LinalgCase& c : LinalgCases()) {
      SCOPED_TRACE(absl::StrCat(c.name, declared ? ", static shape" : ", shape known at run time"));
      const Var x = declared ? tensor(DType::kFloat64, {n, n}, "x") : dmatrix("x");
      const Var b = declared ? tensor(DType::kFloat64, {n}, "b") : dvector("b");
      const Var y = c.build(x, b);
      ASSERT_TRUE(y.ok()) << y.status();
      const Clock::time_point start = Clock::now();
      auto out = RunGraph({x, b}, {y}, {Broadcast(4.0, {n, n}), Broadcast(1.0, {n})});
      const double seconds = SecondsSince(start);
      ASSERT_FALSE(out.ok());
      EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
      EXPECT_TRUE(absl::StrContains(out.status().message(), shape)) << out.status();
      EXPECT_TRUE(absl::StrContains(out.status().message(), words)) << out.status();
      EXPECT_LT(seconds, 1.0);
    }
  }
}

// A 10^6-square matrix (8 TB) is past any machine: refused with no budget installed.
TEST(LinalgLimitsTest, AMatrixPastTheMachinesMemoryIsRefused) {
  ExpectEveryLinalgOpRefused(kHuge, "more than the machine's memory");
}

// A 10^4-square one (800 MB) fits the machine but not a call's budget of 64 MiB.
TEST(LinalgLimitsTest, AMatrixPastTheCallsBudgetIsRefused) {
  MemoryBudgetScope scope(std::make_shared<MemoryBudget>("the test's budget", int64_t{64} << 20));
  ExpectEveryLinalgOpRefused(10000, "the test's budget");
}

// The message names the op, the input and its shape.
TEST(LinalgLimitsTest, TheRefusalNamesTheOpAndTheShape) {
  const Var x = dmatrix("x");
  auto out = RunGraph({x}, {cholesky(x)}, {Broadcast(4.0, {kHuge, kHuge})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "Cholesky{lower=True, destructive=False, on_error='raise'}: "
                                "input 0 (x) of shape (1000000, 1000000) in LAPACK's layout needs "
                                "8000000000000 bytes, more than the machine's memory of "))
      << out.status();
  out = RunGraph({x}, {det(x)}, {Broadcast(4.0, {kHuge, kHuge})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "Det: input 0 of shape (1000000, 1000000) in float64 needs "
                                "8000000000000 bytes"))
      << out.status();
}

OpPtr CoreOf(const Var& v) { return v->owner()->op_ptr(); }

// An m x m matrix with m + 1 on its diagonal and 1 elsewhere (positive definite), as a batch
// of `batch` items that all share its memory.
Tensor SpdBatch(int64_t batch, int64_t m) {
  Tensor a = Tensor::Zeros(DType::kFloat64, {1, m, m});
  for (int64_t i = 0; i < m * m; ++i) a.data<double>()[i] = i % (m + 1) == 0 ? m + 1.0 : 1.0;
  return *a.BroadcastTo({batch, m, m});
}

// A Blockwise Cholesky of `batch` m x m matrices.
absl::StatusOr<std::vector<Tensor>> BatchedCholesky(int64_t batch, int64_t m = 2) {
  const Var x = tensor3("x");
  const Var y = blockwise(CoreOf(cholesky(dmatrix())), "(m,m)->(m,m)", {x});
  if (!y.ok()) return y.status();
  return RunGraph({x}, {y}, {SpdBatch(batch, m)});
}

// A batch of 2^40 items: its outputs (2^45 bytes) are refused before any item runs; with 8 x 8
// items (2^49 bytes) they are past the largest tensor.
TEST(LinalgLimitsTest, ABatchOf2To40IsRefusedBeforeItRuns) {
  const int64_t batch = int64_t{1} << 40;
  Clock::time_point start = Clock::now();
  auto out = BatchedCholesky(batch);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "Blockwise{Cholesky{lower=True, destructive=False, "
                                "on_error='raise'}, (m,m)->(m,m)}: the outputs "
                                "(1099511627776, 2, 2) float64 needs 35184372088832 bytes"))
      << out.status();
  EXPECT_LT(SecondsSince(start), 1.0);
  start = Clock::now();
  out = BatchedCholesky(batch, 8);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "(1099511627776, 8, 8)"))
      << out.status();
  EXPECT_LT(SecondsSince(start), 1.0);
}

// A batch whose outputs need 1 TB, and one whose 128 MiB pass a 64 MiB budget: refused at once.
TEST(LinalgLimitsTest, ABatchPastTheBudgetIsRefusedAtOnce) {
  Clock::time_point start = Clock::now();
  auto out = BatchedCholesky(int64_t{1} << 35);  // 2^35 items of 32 bytes: 1 TiB
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
  EXPECT_LT(SecondsSince(start), 1.0);
  MemoryBudgetScope scope(std::make_shared<MemoryBudget>("the test's budget", int64_t{64} << 20));
  start = Clock::now();
  out = BatchedCholesky(int64_t{1} << 22);  // 2^22 items of 32 bytes: 128 MiB
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "(4194304, 2, 2) float64 needs 134217728 "
                                                        "bytes, but"))
      << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "the test's budget")) << out.status();
  EXPECT_LT(SecondsSince(start), 1.0);
  // Within the budget, a smaller batch runs: each item is [[3, 1], [1, 3]]'s factor.
  auto small = BatchedCholesky(int64_t{1} << 16);
  ASSERT_TRUE(small.ok()) << small.status();
  const double* l = (*small)[0].data<double>() + 4 * ((int64_t{1} << 16) - 1);
  EXPECT_DOUBLE_EQ(l[0], std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(l[2], 1 / std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(l[3], std::sqrt(3.0 - 1.0 / 3.0));
}

// A Blockwise of 10^5 Choleskys of 64 x 64 (seconds of work) stops within a bound of its
// deadline, with DEADLINE_EXCEEDED, long before the whole batch would have ended.
TEST(LinalgLimitsTest, ALongBatchStopsMidwayWhenItsDeadlinePasses) {
  constexpr int64_t kItems = 100000, kM = 64;
  const Var x = tensor3("x");
  const Var y = blockwise(CoreOf(cholesky(dmatrix())), "(m,m)->(m,m)", {x});
  auto f = function({x}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  // The time of 1,000 items, so that the bound below is well under the whole batch's time.
  Clock::time_point start = Clock::now();
  ASSERT_TRUE((*f)({SpdBatch(1000, kM)}).ok());
  const double whole = SecondsSince(start) * kItems / 1000;
  const std::function<absl::Status()> interrupt = DeadlineAfter(0.05);
  InterruptScope scope(&interrupt);
  start = Clock::now();
  auto out = (*f)({SpdBatch(kItems, kM)});
  const double seconds = SecondsSince(start);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded) << out.status();
  std::printf("LIMITS blockwise_cholesky_64 x 100000: stopped after %.1f ms (deadline 50 ms); "
              "the whole batch ~%.2f s\n", 1e3 * seconds, whole);
  // (Under AddressSanitizer the 3.3 GB output alone takes about 1.3 s to allocate.)
  EXPECT_LT(seconds, 2.0) << "the whole batch takes about " << whole << " s";
  EXPECT_LT(seconds, whole / 4) << "the whole batch takes about " << whole << " s";
}

// hyp2f1_der at z = 1 - 10^-6 sums about 10^6 terms an element: a vector of them (minutes of
// work) stops within a bound of its deadline, with DEADLINE_EXCEEDED.
TEST(LinalgLimitsTest, ASlowSpecialFunctionStopsWhenItsDeadlinePasses) {
  const Var a = dvector("a");
  const Var one = scalar_constant(1.0, DType::kFloat64);
  const Var y = hyp2f1_der(a, one, one, scalar_constant(1 - 1e-6, DType::kFloat64),
                           scalar_constant(0.0, DType::kFloat64));
  auto f = function({a}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  // One element's time.
  Clock::time_point start = Clock::now();
  ASSERT_TRUE((*f)({Broadcast(1.0, {1})}).ok());
  const double each = SecondsSince(start);
  constexpr int64_t kElements = 4000;
  const std::function<absl::Status()> interrupt = DeadlineAfter(0.05);
  InterruptScope scope(&interrupt);
  start = Clock::now();
  auto out = (*f)({Broadcast(1.0, {kElements})});
  const double seconds = SecondsSince(start);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded) << out.status();
  std::printf("LIMITS hyp2f1_der x %lld: stopped after %.1f ms (deadline 50 ms); %.1f ms an "
              "element\n", static_cast<long long>(kElements), 1e3 * seconds, 1e3 * each);
  // The deadline, then the round under way: about two elements' time.
  EXPECT_LT(seconds, 0.3 + 4 * each) << "one element takes " << each << " s";
  EXPECT_GT(each * kElements / NumThreads(), 10 * seconds);
}

// The same vector of cheap elements gives the same values whether or not an interrupt that
// never fires is installed (the rounds cover every element once).
TEST(LinalgLimitsTest, SpecialFunctionRoundsCoverEveryElement) {
  const Var x = dvector("x");
  const Var one = scalar_constant(1.0, DType::kFloat64);
  const Var y = hyp2f1(x, one, one, scalar_constant(0.5, DType::kFloat64));
  auto f = function({x}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  constexpr int64_t kN = 100003;
  std::vector<double> v(kN);
  for (int64_t i = 0; i < kN; ++i) v[i] = 0.25 + static_cast<double>(i % 1000) / 100;
  const Tensor in = *Tensor::FromValues<double>(DType::kFloat64, {kN}, v);
  const std::function<absl::Status()> never = [] { return absl::OkStatus(); };
  InterruptScope scope(&never);
  auto out = (*f)({in});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < kN; i += 997) {
    EXPECT_EQ((*out)[0].data<double>()[i], special::Hyp2F1(v[i], 1, 1, 0.5)) << "element " << i;
  }
  EXPECT_EQ((*out)[0].data<double>()[kN - 1], special::Hyp2F1(v[kN - 1], 1, 1, 0.5));
}

}  // namespace
}  // namespace kiln

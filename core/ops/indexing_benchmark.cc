// Gather and scatter kernels (AdvancedSubtensor1, AdvancedIncSubtensor1 and AdvancedSubtensor's
// take-like case), timed through each op's Perform on the data tests/bench/indexing_vs_numpy.py
// gives NumPy's take, add.at, bincount and fancy assignment in the same run. Cases, by the last
// part of the benchmark's name:
//   take_radon         x[idx]: 919 float64 from 85 (the radon model's shape)
//   take_1e6           10^6 float64 from 10^5
//   take_1e6_f32       the same in float32
//   take_rows          10^4 rows of 64 float64 from a (10^4, 64) matrix
//   inc_radon          add.at of 919 float64 into 85 (x copied first: no_inplace)
//   inc_radon_sorted   the same with the indices sorted (runs of repeats, as the radon data's)
//   inc_1e6            add.at of 10^6 into 10^5 (no_inplace)
//   inc_1e6_inplace    the same written into x (inplace)
//   inc_rows           add.at of 10^4 rows of 64 into (10^4, 64) (no_inplace)
//   set_radon, set_1e6 x[idx] = y, the last write of a repeated index kept (no_inplace)
//   adv_take_1e6       AdvancedSubtensor with one index vector (what FAST_COMPILE leaves)
//   adv_pairs_1e5      AdvancedSubtensor x[i, j]: 10^5 pairs from a (1000, 1000) matrix
//   adv_inc_pairs_1e5  AdvancedIncSubtensor: add.at of 10^5 values at those pairs (no_inplace)
// Index i of a case with n sources is (i * 7919 + 13) % n; values are (i % 1000) / 1000.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>

#include "core/kiln.h"
#include "core/ops/advanced_indexing.h"

namespace {

using kiln::DType;
using kiln::Tensor;

Tensor Indices(int64_t count, int64_t n, bool sorted = false) {
  Tensor t = Tensor::Empty(DType::kInt64, {count});
  int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < count; ++i) p[i] = (i * 7919 + 13) % n;
  if (sorted) std::sort(p, p + count);
  return t;
}

Tensor Values(kiln::Shape shape, DType dtype = DType::kFloat64) {
  Tensor t = Tensor::Empty(DType::kFloat64, shape);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.size(); ++i) p[i] = static_cast<double>(i % 1000) / 1000.0;
  return t.AsType(dtype);
}

kiln::VariablePtr VarOf(const Tensor& t) {
  return kiln::tensor(t.dtype(), kiln::StaticShape(t.ndim())).ptr();
}

// Runs `op` on `inputs` through Perform, the output dropped after each iteration.
void RunOp(benchmark::State& state, const kiln::OpPtr& op, std::vector<Tensor> inputs) {
  std::vector<kiln::VariablePtr> vars;
  for (const Tensor& t : inputs) vars.push_back(VarOf(t));
  absl::StatusOr<kiln::ApplyPtr> node = op->MakeNode(vars);
  if (!node.ok()) {
    state.SkipWithError(node.status().ToString().c_str());
    return;
  }
  std::vector<Tensor> out(1);
  for (auto _ : state) {
    absl::Status s = (*node)->op().Perform(**node, inputs, out);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(out[0].raw_data());
    out[0] = Tensor();
  }
}

kiln::OpPtr Take() { return std::make_shared<kiln::AdvancedSubtensor1>(); }
kiln::OpPtr Inc(bool set, bool inplace = false) {
  return std::make_shared<kiln::AdvancedIncSubtensor1>(
      kiln::AdvancedIncSubtensor1Attrs{.set = set, .inplace = inplace});
}

void BM_Take(benchmark::State& state, kiln::Shape x_shape, int64_t count, DType dtype) {
  RunOp(state, Take(), {Values(x_shape, dtype), Indices(count, x_shape[0])});
}
BENCHMARK_CAPTURE(BM_Take, take_radon, kiln::Shape{85}, 919, DType::kFloat64);
BENCHMARK_CAPTURE(BM_Take, take_1e6, kiln::Shape{100000}, 1000000, DType::kFloat64);
BENCHMARK_CAPTURE(BM_Take, take_1e6_f32, kiln::Shape{100000}, 1000000, DType::kFloat32);
BENCHMARK_CAPTURE(BM_Take, take_rows, kiln::Shape{10000, 64}, 10000, DType::kFloat64);

void BM_Inc(benchmark::State& state, kiln::Shape x_shape, int64_t count, bool set, bool inplace,
            bool sorted) {
  kiln::Shape y_shape = x_shape;
  y_shape[0] = count;
  RunOp(state, Inc(set, inplace),
        {Values(x_shape), Values(y_shape), Indices(count, x_shape[0], sorted)});
}
BENCHMARK_CAPTURE(BM_Inc, inc_radon, kiln::Shape{85}, 919, false, false, false);
BENCHMARK_CAPTURE(BM_Inc, inc_radon_sorted, kiln::Shape{85}, 919, false, false, true);
BENCHMARK_CAPTURE(BM_Inc, inc_1e6, kiln::Shape{100000}, 1000000, false, false, false);
BENCHMARK_CAPTURE(BM_Inc, inc_1e6_inplace, kiln::Shape{100000}, 1000000, false, true, false);
BENCHMARK_CAPTURE(BM_Inc, inc_rows, kiln::Shape{10000, 64}, 10000, false, false, false);
BENCHMARK_CAPTURE(BM_Inc, set_radon, kiln::Shape{85}, 919, true, false, false);
BENCHMARK_CAPTURE(BM_Inc, set_1e6, kiln::Shape{100000}, 1000000, true, false, false);

// AdvancedSubtensor with one index vector: x[idx] before the specialize rewrite.
void BM_AdvancedTake(benchmark::State& state) {
  auto op = std::make_shared<kiln::AdvancedSubtensor>(
      kiln::AdvancedSubtensorAttrs{{kiln::AdvIndexEntry{}}});
  RunOp(state, op, {Values({100000}), Indices(1000000, 100000)});
}
BENCHMARK(BM_AdvancedTake)->Name("BM_AdvancedTake/adv_take_1e6");

// The general path: x[i, j] on a (1000, 1000) matrix with two index vectors of 10^5 (i as the
// other cases' indices, j = (k * 104729 + 7) % 1000), read and incremented (numpy.add.at).
Tensor PairIndex() {
  Tensor t = Tensor::Empty(DType::kInt64, {100000});
  for (int64_t k = 0; k < t.size(); ++k) t.data<int64_t>()[k] = (k * 104729 + 7) % 1000;
  return t;
}
void BM_AdvancedPairs(benchmark::State& state, bool inc) {
  const std::vector<kiln::AdvIndexEntry> idx = {kiln::AdvIndexEntry{}, kiln::AdvIndexEntry{}};
  if (inc) {
    RunOp(state, std::make_shared<kiln::AdvancedIncSubtensor>(kiln::AdvancedIncSubtensorAttrs{idx}),
          {Values({1000, 1000}), Values({100000}), Indices(100000, 1000), PairIndex()});
  } else {
    RunOp(state, std::make_shared<kiln::AdvancedSubtensor>(kiln::AdvancedSubtensorAttrs{idx}),
          {Values({1000, 1000}), Indices(100000, 1000), PairIndex()});
  }
}
BENCHMARK_CAPTURE(BM_AdvancedPairs, adv_pairs_1e5, false);
BENCHMARK_CAPTURE(BM_AdvancedPairs, adv_inc_pairs_1e5, true);

}  // namespace

BENCHMARK_MAIN();

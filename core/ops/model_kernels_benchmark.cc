// The elementwise, Composite, reduction and softmax kernels on the shapes of the model graphs
// (issue 40): the mixture model's (1000, 1) x (1, 3) broadcasts and (1000, 3) reductions, and
// eight_schools' scalars and 8-vectors, where a call's fixed cost dominates. Each node's Perform
// is timed against the same arithmetic written as a plain C++ loop (into a freshly allocated
// output, as a node's must be), interleaved in the same run, five rounds. Prints
//   BENCH <case> ns=<median> ref_ns=<median of the loop> ratio=<ns / ref_ns> range=<min-max>
// An argument runs only the cases whose name contains it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/kiln.h"
#include "core/ops/composite.h"
#include "core/ops/nnet_xent.h"

namespace kiln {
namespace {

constexpr int kRounds = 5;
double sink = 0;
const char* only = "";  // argv[1]: run only the cases whose name contains it

template <typename Fn>
double NsPerCall(Fn& fn, int calls) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) fn();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
             .count() /
         calls;
}

// Median and range of `call` and `ref` timed in turn, as a BENCH line.
template <typename Call, typename Ref>
void Report(const std::string& name, Call call, Ref ref, int calls) {
  if (name.find(only) == std::string::npos) return;
  std::vector<double> c, r;
  for (int round = 0; round < kRounds; ++round) {
    c.push_back(NsPerCall(call, calls));
    r.push_back(NsPerCall(ref, calls));
  }
  std::sort(c.begin(), c.end());
  std::sort(r.begin(), r.end());
  std::printf("BENCH %s ns=%.0f ref_ns=%.0f ratio=%.2f range=%.0f-%.0f\n", name.c_str(),
              c[kRounds / 2], r[kRounds / 2], c[kRounds / 2] / r[kRounds / 2], c.front(),
              c.back());
  std::fflush(stdout);
}

Tensor Values(const Shape& shape, double lo, double hi) {
  Tensor t = Tensor::Empty(DType::kFloat64, shape);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.size(); ++i) p[i] = lo + (hi - lo) * ((i * 7919) % 1009) / 1009.0;
  return t;
}

// Times node's Perform on `inputs`, against `ref`.
template <typename Ref>
void ReportNode(const std::string& name, const Var& out, const std::vector<Tensor>& inputs,
                Ref ref, int calls) {
  const Apply& node = *out->owner();
  std::vector<Tensor> outputs(node.num_outputs());
  auto call = [&] {
    const absl::Status s = node.op().Perform(node, inputs, outputs);
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), s.ToString().c_str());
      std::exit(1);
    }
    sink += outputs[0].ElementAsDouble(0);
    for (Tensor& o : outputs) o = Tensor();
  };
  Report(name, call, ref, calls);
}

// A fused node of `program` over variables of the given static shapes.
Var Fused(const std::vector<Var>& scalars, const std::vector<Var>& outs,
          const std::vector<StaticShape>& shapes) {
  auto program = *ScalarProgram::FromGraph(scalars, outs);
  std::vector<Var> vars;
  for (const StaticShape& s : shapes) vars.push_back(tensor(DType::kFloat64, s));
  return apply_composite(program, vars)[0];
}

void Mixture() {
  constexpr int64_t n = 1000, k = 3;
  const StaticShape col = {std::nullopt, 1}, row = {1, std::nullopt};
  const StaticShape mat = {std::nullopt, std::nullopt};
  // normal_logp's fused node: (i3 - i4) / i2 over x (n, 1), means (1, k), sds (1, k); four
  // outputs as the mixture's gradient keeps them.
  {
    std::vector<Var> s;
    for (int i = 0; i < 5; ++i) s.push_back(dscalar("i" + std::to_string(i)));
    const Var d = s[3] - s[4], z = d / s[2];
    const Var lp = (-0.5 * sqr(z) - 0.9189385332046727) - s[1];
    const Var out = Fused(s, {s[0] + lp, lp, z, d}, {row, row, row, col, row});
    const std::vector<Tensor> in = {Values({1, k}, -2, 0), Values({1, k}, -1, 1),
                                    Values({1, k}, 0.5, 2), Values({n, 1}, -4, 4),
                                    Values({1, k}, -2, 3)};
    ReportNode("mixture_composite4_1000x1_1x3", out, in, [&] {
      Tensor o[4];
      for (Tensor& t : o) t = Tensor::Empty(DType::kFloat64, {n, k});
      const double *i0 = in[0].data<double>(), *i1 = in[1].data<double>(),
                   *i2 = in[2].data<double>(), *i3 = in[3].data<double>(),
                   *i4 = in[4].data<double>();
      double *o0 = o[0].data<double>(), *o1 = o[1].data<double>(), *o2 = o[2].data<double>(),
             *o3 = o[3].data<double>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < k; ++j) {
          const double dd = i3[i] - i4[j], zz = dd / i2[j];
          const double l = (-0.5 * (zz * zz) - 0.9189385332046727) - i1[j];
          o0[i * k + j] = i0[j] + l;
          o1[i * k + j] = l;
          o2[i * k + j] = zz;
          o3[i * k + j] = dd;
        }
      }
      sink += o0[0];
    }, 2000);
  }
  // exp(i0 - i1): (n, k) minus the rows' maxima (n, 1).
  {
    const Var a = dscalar("a"), b = dscalar("b");
    const Var out = Fused({a, b}, {exp(a - b)}, {mat, col});
    const std::vector<Tensor> in = {Values({n, k}, -3, 0), Values({n, 1}, 0, 1)};
    ReportNode("mixture_exp_sub_1000x3_1000x1", out, in, [&] {
      Tensor o = Tensor::Empty(DType::kFloat64, {n, k});
      const double *x = in[0].data<double>(), *m = in[1].data<double>();
      double* p = o.data<double>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < k; ++j) p[i * k + j] = std::exp(x[i * k + j] - m[i]);
      }
      sink += p[0];
    }, 2000);
  }
  // The reductions of a (n, k) matrix.
  const Tensor x = Values({n, k}, -3, 3);
  const Var xm = dmatrix("x");
  ReportNode("sum_axis0_1000x3", sum(xm, {0}), {x}, [&] {
    Tensor o = Tensor::Empty(DType::kFloat64, {k});
    double* p = o.data<double>();
    const double* v = x.data<double>();
    for (int64_t j = 0; j < k; ++j) p[j] = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < k; ++j) p[j] += v[i * k + j];
    }
    sink += p[0];
  }, 5000);
  auto row_ref = [&](bool is_max) {
    return [&x, is_max] {
      Tensor o = Tensor::Empty(DType::kFloat64, {n});
      double* p = o.data<double>();
      const double* v = x.data<double>();
      for (int64_t i = 0; i < n; ++i) {
        const double* r = v + i * k;
        p[i] = is_max ? std::max(std::max(r[0], r[1]), r[2]) : (r[0] + r[1]) + r[2];
      }
      sink += p[0];
    };
  };
  ReportNode("sum_axis1_1000x3", sum(xm, {1}), {x}, row_ref(false), 5000);
  ReportNode("max_axis1_1000x3", max(xm, {1}), {x}, row_ref(true), 5000);
  // SoftmaxWithBias over (n, k).
  {
    const Tensor b = Values({k}, -1, 1);
    ReportNode("softmax_with_bias_1000x3", softmax_with_bias(xm, dvector("b")), {x, b}, [&] {
      Tensor o = Tensor::Empty(DType::kFloat64, {n, k});
      const double *v = x.data<double>(), *bb = b.data<double>();
      double* p = o.data<double>();
      for (int64_t i = 0; i < n; ++i) {
        double m = -INFINITY;
        for (int64_t j = 0; j < k; ++j) m = std::max(m, v[i * k + j] + bb[j]);
        double t = 0;
        for (int64_t j = 0; j < k; ++j) t += p[i * k + j] = std::exp(v[i * k + j] + bb[j] - m);
        for (int64_t j = 0; j < k; ++j) p[i * k + j] /= t;
      }
      sink += p[0];
    }, 2000);
  }
}

void EightSchools() {
  // sqr(exp(i0) / 5.0), exp(i0) / 5.0, exp(i0) on a scalar.
  {
    const Var a = dscalar("a");
    const Var e = exp(a), q = e / 5.0;
    const Var out = Fused({a}, {sqr(q), q, e}, {StaticShape{}});
    const std::vector<Tensor> in = {Values({}, 0.3, 0.3)};
    ReportNode("es_composite3_scalar", out, in, [&] {
      Tensor o[3];
      for (Tensor& t : o) t = Tensor::Empty(DType::kFloat64, {});
      const double e = std::exp(in[0].data<double>()[0]), q = e / 5.0;
      o[0].data<double>()[0] = q * q;
      o[1].data<double>()[0] = q;
      o[2].data<double>()[0] = e;
      sink += o[0].data<double>()[0];
    }, 200000);
  }
  // The likelihood's 4-output node over 8-vectors and scalars.
  {
    std::vector<Var> s;
    for (int i = 0; i < 6; ++i) s.push_back(dscalar("i" + std::to_string(i)));
    const Var z = (s[3] - (s[4] + s[5] * s[2])) / s[1];
    const Var out = Fused(s, {(-s[2]) + ((z / s[1]) * s[5]), (z * s[2]) / s[1],
                              (-0.5 * sqr(z) - 0.9189385332046727) - s[0], z / s[1]},
                          {StaticShape{8}, StaticShape{8}, StaticShape{8}, StaticShape{8},
                           StaticShape{1}, StaticShape{1}});
    const std::vector<Tensor> in = {Values({8}, 0, 1),  Values({8}, 5, 15), Values({8}, -1, 1),
                                    Values({8}, -3, 28), Values({1}, 4, 4), Values({1}, 3, 3)};
    ReportNode("es_composite4_vec8", out, in, [&] {
      Tensor o[4];
      for (Tensor& t : o) t = Tensor::Empty(DType::kFloat64, {8});
      const double *i0 = in[0].data<double>(), *i1 = in[1].data<double>(),
                   *i2 = in[2].data<double>(), *i3 = in[3].data<double>();
      const double i4 = in[4].data<double>()[0], i5 = in[5].data<double>()[0];
      for (int j = 0; j < 8; ++j) {
        const double zz = (i3[j] - (i4 + i5 * i2[j])) / i1[j];
        o[0].data<double>()[j] = -i2[j] + (zz / i1[j]) * i5;
        o[1].data<double>()[j] = (zz * i2[j]) / i1[j];
        o[2].data<double>()[j] = (-0.5 * (zz * zz) - 0.9189385332046727) - i0[j];
        o[3].data<double>()[j] = zz / i1[j];
      }
      sink += o[0].data<double>()[0];
    }, 200000);
  }
  // true_divide of two 8-vectors, and the sum of one.
  {
    const std::vector<Tensor> in = {Values({8}, 1, 2), Values({8}, 3, 4)};
    ReportNode("es_true_divide_vec8", dvector("a") / dvector("b"), in, [&] {
      Tensor o = Tensor::Empty(DType::kFloat64, {8});
      for (int j = 0; j < 8; ++j) {
        o.data<double>()[j] = in[0].data<double>()[j] / in[1].data<double>()[j];
      }
      sink += o.data<double>()[0];
    }, 200000);
    ReportNode("es_sum_vec8", sum(dvector("v")), {in[0]}, [&] {
      Tensor o = Tensor::Empty(DType::kFloat64, {});
      double t = 0;
      for (int j = 0; j < 8; ++j) t += in[0].data<double>()[j];
      o.data<double>()[0] = t;
      sink += t;
    }, 200000);
  }
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  if (argc > 1) kiln::only = argv[1];
  kiln::Mixture();
  kiln::EightSchools();
  if (kiln::sink == 12345.678) std::printf("unreachable\n");  // keeps the work alive
  return 0;
}

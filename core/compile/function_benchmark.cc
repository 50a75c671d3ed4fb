// Compiled training graphs of the runtime issue, timed through function(): G3 (logistic
// regression cost and gradients, X 20000x100) and G4 (a 2-layer MLP, X 4096x512, 1024 hidden,
// 10 classes, softmax cross-entropy, cost and gradients), G4's compile time and peak memory.
// Prints "KILN <case> <value>" lines; tests/bench/graphs_vs_numpy.py runs NumPy on the same
// graphs in the same run and prints the BENCH lines. G4 is also timed against its GEMM floor:
// its five matrix products alone, through the same OpenBLAS, alternating with G4's calls.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "core/kiln.h"

namespace kiln {
namespace {

Tensor Random(Shape shape, uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<double> v(ShapeSize(shape));
  for (double& e : v) e = normal(rng);
  return *Tensor::FromValues<double>(DType::kFloat64, std::move(shape), v);
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Milliseconds of one call of f.
double CallMs(const Function& f, const std::vector<Tensor>& args) {
  const auto start = std::chrono::steady_clock::now();
  auto out = f(args);
  const double ms = MsSince(start);
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
    std::exit(1);
  }
  return ms;
}

double BestMs(const Function& f, const std::vector<Tensor>& args, int repeats) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) best = std::min(best, CallMs(f, args));
  return best;
}

// G4's matrix products on operands of its shapes (X 4096x512, W1 512x1024, W2 1024x10): h = X W1,
// logits = h W2, dh = d W2^T, dW1 = X^T dh, dW2 = h^T d, straight through cblas_dgemm.
class G4Products {
 public:
  // Milliseconds of the five products.
  double Ms() {
    const auto start = std::chrono::steady_clock::now();
    Gemm(CblasNoTrans, CblasNoTrans, 4096, 1024, 512, x_, 512, w1_, 1024, h_);
    Gemm(CblasNoTrans, CblasNoTrans, 4096, 10, 1024, h_, 1024, w2_, 10, logits_);
    Gemm(CblasNoTrans, CblasTrans, 4096, 1024, 10, d_, 10, w2_, 10, dh_);
    Gemm(CblasTrans, CblasNoTrans, 512, 1024, 4096, x_, 512, dh_, 1024, dw1_);
    Gemm(CblasTrans, CblasNoTrans, 1024, 10, 4096, h_, 1024, d_, 10, dw2_);
    return MsSince(start);
  }

 private:
  static void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                   const std::vector<double>& a, int lda, const std::vector<double>& b, int ldb,
                   std::vector<double>& c) {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a.data(), lda, b.data(), ldb, 0.0, c.data(),
                n);
  }
  std::vector<double> x_ = std::vector<double>(4096 * 512, 0.5),
                      w1_ = std::vector<double>(512 * 1024, 0.01),
                      w2_ = std::vector<double>(1024 * 10, 0.02),
                      h_ = std::vector<double>(4096 * 1024), d_ = std::vector<double>(4096 * 10, 0.1),
                      logits_ = std::vector<double>(4096 * 10),
                      dh_ = std::vector<double>(4096 * 1024),
                      dw1_ = std::vector<double>(512 * 1024), dw2_ = std::vector<double>(1024 * 10);
};

}  // namespace
}  // namespace kiln

int main() {
  using namespace kiln;
  {
    Var X = dmatrix("X"), y = dvector("y"), w = dvector("w"), b = dscalar("b");
    Var cost = mean(softplus(-y * (dot(X, w) + b)));
    auto g = grad(cost, {w, b});
    FunctionOptions options;
    options.profile = std::getenv("KILN_PROFILE") != nullptr;
    auto f = function({X, y, w, b}, {cost, (*g)[0], (*g)[1]}, options);
    if (!f.ok()) return 1;
    std::vector<double> labels(20000);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = i % 3 == 0 ? 1.0 : -1.0;
    const std::vector<Tensor> args = {
        Random({20000, 100}, 1, 1.0), *Tensor::FromValues<double>(DType::kFloat64, {20000}, labels),
        Random({100}, 2, 0.1), *Tensor::Of<double>(DType::kFloat64, {}, {0.1})};
    std::printf("KILN g3 %.3f\n", BestMs(*f, args, 50));
    if (options.profile) std::fprintf(stderr, "%s", f->ProfileSummary().c_str());
  }
  {
    Var X = dmatrix("X"), W1 = dmatrix("W1"), W2 = dmatrix("W2");
    Var t = lvector("t");
    Var cost = mean(categorical_crossentropy(softmax(dot(tanh(dot(X, W1)), W2)), t));
    auto g = grad(cost, {W1, W2});
    const auto start = std::chrono::steady_clock::now();
    FunctionOptions options;
    options.profile = std::getenv("KILN_PROFILE") != nullptr;
    auto f = function({X, W1, W2, t}, {cost, (*g)[0], (*g)[1]}, options);
    const double compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!f.ok()) return 1;
    std::vector<int64_t> labels(4096);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 10);
    const std::vector<Tensor> args = {Random({4096, 512}, 3, 1.0), Random({512, 1024}, 4, 0.04),
                                      Random({1024, 10}, 5, 0.03),
                                      *Tensor::FromValues<int64_t>(DType::kInt64, {4096}, labels)};
    // G4 and its products in turn, so that both see the same machine; the best of each.
    G4Products products;
    double g4_ms = 1e30, floor_ms = 1e30;
    for (int r = 0; r < 10; ++r) {
      g4_ms = std::min(g4_ms, CallMs(*f, args));
      floor_ms = std::min(floor_ms, products.Ms());
    }
    std::printf("KILN g4 %.3f\n", g4_ms);
    std::printf("KILN gemm_floor_g4 %.3f\n", floor_ms);
    std::printf("KILN compile_g4 %.3f\n", compile_ms);
    std::printf("KILN peak_memory_g4 %.1f\n", f->stats().peak_bytes / 1e6);
    // The least that must be alive at once besides the inputs: tanh(X W1) and the gradient
    // flowing into it (two 4096x1024 matrices) while dW1's input is formed, plus the outputs.
    const double live_set = 2.0 * 4096 * 1024 * 8 + (512 * 1024 + 1024 * 10 + 1) * 8.0;
    std::printf("KILN live_set_g4 %.1f\n", live_set / 1e6);
    std::printf("KILN nodes_g4 %d\n", f->fgraph().num_nodes());
    if (options.profile) {
      std::fprintf(stderr, "%s", f->ProfileSummary().c_str());
      for (Apply* node : f->fgraph().Toposort())
        std::fprintf(stderr, "  %s\n", node->ToString().c_str());
    }
  }
  return 0;
}

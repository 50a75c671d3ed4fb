// The gradients of the nlinalg ops, as graphs: Aesara's for MatrixInverse, MatrixPinv, Det and
// Eigh (through EighGrad); PyTensor 2.34's for SVD and QRFull (with its triangular solves);
// SLogDet's from d log|det x| = tr(x^-1 dx); Lstsq's x through its pseudo-inverse, x = pinv(a) b.
#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/ops/alloc.h"
#include "core/ops/assert_op.h"
#include "core/ops/diagonal.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/ifelse.h"
#include "core/ops/indexing.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/nlinalg.h"
#include "core/ops/nlinalg_decomp.h"
#include "core/ops/shape.h"
#include "core/ops/slinalg.h"

namespace kiln {
namespace {

Var T(const Var& x) { return transpose(x); }

// The gradient given for output i, or zeros like the output when it is disconnected.
Var GradOrZeros(const Apply& node, const std::vector<Var>& g, size_t i) {
  if (i < g.size() && g[i].ok() && !IsDisconnected(*g[i])) return g[i];
  return zeros_like(Var(node.outputs()[i]));
}

bool Connected(const std::vector<Var>& g, size_t i) {
  return i < g.size() && g[i].ok() && !IsDisconnected(*g[i]);
}

// The identity with x's shape (Aesara's identity_like), in x's dtype.
Var IdentityLike(const Var& x) {
  return eye(shape_i(x, 0), shape_i(x, 1), constant(int64_t{0}), x.dtype());
}

// The lower triangle of x from diagonal k down (numpy.tril(x, k)).
Var Tril(const Var& x, int64_t k) {
  return x * tri(shape_i(x, 0), shape_i(x, 1), constant(k), x.dtype());
}

// x cast to the dtype of `like` when they differ (the gradient of an input has its dtype).
Var Like(const Var& x, const Var& like) {
  return x.ok() && like.ok() && x.dtype() != like.dtype() ? cast(x, like.dtype()) : x;
}

// Aesara's MatrixPinv gradient for x with pinv z and output gradient gz:
// (-z gz^T z + z z^T gz (I - x z) + (I - z x) gz z^T z)^T.
Var PinvGrad(const Var& x, const Var& z, const Var& gz) {
  const Var xz = dot(x, z), zx = dot(z, x);
  return T(-matrix_dot({z, T(gz), z}) + matrix_dot({z, T(z), gz, IdentityLike(xz) - xz}) +
           matrix_dot({IdentityLike(zx) - zx, gz, T(z), z}));
}

}  // namespace

// Aesara's: -(x^-1 gz^T x^-1)^T.
std::vector<Var> MatrixInverse::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var xi(node.outputs()[0]);
  return {-T(matrix_dot({xi, T(g[0]), xi}))};
}

std::vector<Var> MatrixPinv::LOp(const Apply& node, const std::vector<Var>& g) const {
  return {PinvGrad(Var(node.inputs()[0]), Var(node.outputs()[0]), g[0])};
}

// Aesara's: gz det(x) x^-T.
std::vector<Var> Det::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  return {g[0] * Var(node.outputs()[0]) * T(matrix_inverse(x))};
}

// The sign is locally constant; log |det x| has the gradient x^-T.
std::vector<Var> SLogDet::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  if (!Connected(g, 1)) return {zeros_like(x)};
  return {g[1] * T(matrix_inverse(x))};
}

// x = pinv(a) b: a gets the pseudo-inverse's gradient for gz = gx b^T, b gets pinv(a)^T gx. The
// residuals and singular values have no gradient here; the rank has none.
std::vector<Var> Lstsq::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var a(node.inputs()[0]), b(node.inputs()[1]);
  if (Connected(g, 1) || Connected(g, 3)) {
    const char* why = "the gradients of Lstsq's residuals and singular values are not implemented";
    return {grad_not_implemented(Name(), 0, a.ptr(), why),
            grad_not_implemented(Name(), 1, b.ptr(), why), disconnected_type()};
  }
  const Var gx = GradOrZeros(node, g, 0);
  const Var z = pinv(a);
  const Var gz = b.ndim() == 1 ? outer(gx, b) : dot(gx, T(b));
  return {Like(PinvGrad(a, z, gz), a), Like(dot(T(z), gx), b), disconnected_type()};
}

std::vector<Var> TensorInv::LOp(const Apply& node, const std::vector<Var>&) const {
  return {grad_not_implemented(Name(), 0, node.inputs()[0])};
}

std::vector<Var> TensorSolve::LOp(const Apply& node, const std::vector<Var>&) const {
  return {grad_not_implemented(Name(), 0, node.inputs()[0]),
          grad_not_implemented(Name(), 1, node.inputs()[1])};
}

std::vector<Var> Eig::LOp(const Apply& node, const std::vector<Var>&) const {
  return {grad_not_implemented(Name(), 0, node.inputs()[0])};
}

// Aesara's: EighGrad of (x, w, v) and the output gradients, zeros for a disconnected one.
std::vector<Var> Eigh::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]), w(node.outputs()[0]), v(node.outputs()[1]);
  return {ApplyOp(OpPtr(std::make_shared<EighGrad>(attrs())),
                  {x, w, v, GradOrZeros(node, g, 0), GradOrZeros(node, g, 1)})};
}

std::vector<Var> EighGrad::LOp(const Apply& node, const std::vector<Var>&) const {
  std::vector<Var> out;
  for (int i = 0; i < 5; ++i) out.push_back(grad_not_implemented(Name(), i, node.inputs()[i]));
  return out;
}

// PyTensor 2.34's (after autograd and Seeger et al., "Auto-differentiating linear algebra").
std::vector<Var> SVD::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var a(node.inputs()[0]);
  // Only s is used: A_bar = (U * ds) VT with the reduced U and VT.
  auto s_only = [&](const Var& ds) {
    const std::vector<Var> usv = svd(a, false, true);
    return dot(usv[0] * dimshuffle(ds, {kX, 0}), usv[2]);
  };
  if (!attrs().compute_uv) return {s_only(g[0])};
  if (!Connected(g, 0) && !Connected(g, 2)) return {s_only(GradOrZeros(node, g, 1))};
  if (attrs().full_matrices) {
    return {grad_not_implemented(Name(), 0, a.ptr(),
                                 "Gradient of svd not implemented for full_matrices=True")};
  }
  const Var u(node.outputs()[0]), s(node.outputs()[1]), vt(node.outputs()[2]);
  const Var du = GradOrZeros(node, g, 0), ds = GradOrZeros(node, g, 1),
            dvt = GradOrZeros(node, g, 2);
  const Var v = T(vt), dv = T(dvt);
  const Var m = shape_i(a, 0), n = shape_i(a, 1), k = shape_i(s, 0);
  const DType dt = s.dtype();
  const Var eye_k = eye(k, k, constant(int64_t{0}), dt);
  // |t| kept from 1e-8 with its sign (1 at 0): s_i^2 - s_j^2 robust to repeated values.
  auto h = [&](const Var& t) {
    return maximum(abs(t), scalar_constant(1e-8, dt)) *
           switch_(eq(t, scalar_constant(0.0, dt)), scalar_constant(1.0, dt), sgn(t));
  };
  const Var row = dimshuffle(s, {kX, 0}), col = dimshuffle(s, {0, kX});
  const Var e = (ones({k, k}, dt) - eye_k) / (h(row - col) * h(row + col));
  const Var utgu = dot(T(u), du), vtgv = dot(vt, dv);
  Var a_bar = (e * (utgu - T(utgu))) * row;
  a_bar = a_bar + eye_k * dimshuffle(ds, {0, kX});
  a_bar = a_bar + col * (e * (vtgv - T(vtgv)));
  a_bar = matrix_dot({u, a_bar, vt});
  const Var wide =
      a_bar + matrix_dot({u / row, dvt, eye(n, n, constant(int64_t{0}), dt) - dot(v, vt)});
  const Var tall =
      a_bar + T(matrix_dot({v / row, T(du), eye(m, m, constant(int64_t{0}), dt) - dot(u, T(u))}));
  return {switch_(eq(m, n), a_bar, switch_(lt(m, n), wide, tall))};
}

// PyTensor 2.34's (Liao, Liu, Wang and Xiang, "Differentiable Programming Tensor Networks").
std::vector<Var> QRFull::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var a(node.inputs()[0]);
  const std::string& mode = attrs().mode;
  if (mode == "raw") {
    return {
        grad_not_implemented(Name(), 0, a.ptr(), "Gradient of qr not implemented for mode=raw")};
  }
  const StaticShape& shape = a->tensor_type()->shape();
  Var q, r, dq, dr;
  if (mode == "r") {  // numpy's r is (k, n): Q and R of the reduced factorization
    const std::vector<Var> qr_ = qr(a, "reduced");
    q = qr_[0], r = qr_[1];
    dq = zeros_like(q);
    dr = g[0];
  } else {
    q = Var(node.outputs()[0]), r = Var(node.outputs()[1]);
    dq = GradOrZeros(node, g, 0), dr = GradOrZeros(node, g, 1);
    if (mode == "complete") {
      if (shape[0] && shape[1] && *shape[0] > *shape[1]) {
        return {grad_not_implemented(
            Name(), 0, a.ptr(),
            "Gradient of qr not implemented for m x n matrices with m > n and mode=complete")};
      }
      r = assert_op(r, {le(shape_i(a, 0), shape_i(a, 1))},
                    "Gradient of qr not implemented for m x n matrices with m > n and "
                    "mode=complete");
    }
  }
  auto copyltu = [](const Var& x) { return Tril(x, 0) + T(Tril(x, -1)); };
  // m >= n: R is square.
  auto tall = [&]() {
    const Var mm = dot(r, T(dr)) - dot(T(dq), q);
    const Var kk = dq + dot(q, copyltu(mm));
    return T(solve_triangular(r, T(kk)));
  };
  // m < n: a = [X, Y] with X square.
  auto wide = [&]() {
    const Var m = shape_i(a, 0);
    const Var y = subtensor(a, {Slice{}, Slice{m, {}, {}}});
    const Var u = subtensor(r, {Slice{}, Slice{{}, m, {}}});
    const Var du = subtensor(dr, {Slice{}, Slice{{}, m, {}}});
    const Var dv = subtensor(dr, {Slice{}, Slice{m, {}, {}}});
    const Var dq_y = dq + dot(y, T(dv));
    const Var mm = dot(u, T(du)) - dot(T(dq_y), q);
    const Var x_bar = T(solve_triangular(u, T(dq_y + dot(q, copyltu(mm)))));
    return concatenate({x_bar, dot(q, dv)}, 1);
  };
  if (shape[0] && shape[1]) return {*shape[0] >= *shape[1] ? tall() : wide()};
  return {ifelse(ge(shape_i(a, 0), shape_i(a, 1)), tall(), wide())};
}

}  // namespace kiln

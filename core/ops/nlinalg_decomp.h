// aesara.tensor.nlinalg's decompositions: Eig, Eigh{UPLO} (with its gradient op EighGrad),
// QRFull{mode} and SVD{full_matrices, compute_uv}, as NumPy's numpy.linalg computes them
// (kernels in nlinalg_kernels.h). Output dtypes are Aesara's: Eig keeps x's dtype (the real
// parts of complex eigenpairs for a real x, as Aesara's astype), Eigh gives float32 for
// float32/complex64 inputs and float64 otherwise (complex eigenvectors for a complex x), QRFull
// and SVD give float{itemsize} (float32 for float32/int32, float64 for float64/int64).
#ifndef KILN_CORE_OPS_NLINALG_DECOMP_H_
#define KILN_CORE_OPS_NLINALG_DECOMP_H_

#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Eig: x (n, n) -> (w (n,), v (n, n)), eigenvalues and unit right eigenvectors (columns).
class Eig final : public DeclaredOp<Eig, NoAttrs> {
 public:
  KILN_DECLARED_OP("Eig")
};

// The props of Eigh and EighGrad: the triangle of x that is read, "L" or "U".
struct EighAttrs {
  std::string UPLO = "L";
  static constexpr auto Fields() { return std::tuple{AttrField{"UPLO", &EighAttrs::UPLO}}; }
  absl::Status Check() const;  // "L" or "U"
};

// Eigh{UPLO}: x (n, n) Hermitian -> (w ascending (n,), v (n, n)).
class Eigh final : public DeclaredOp<Eigh, EighAttrs> {
 public:
  KILN_DECLARED_OP("Eigh")
};

// EighGrad{UPLO}: (x, w, v, gw, gv) -> the gradient of Eigh{UPLO}(x) wrt x, on the triangle
// UPLO reads (the other triangle's entries folded onto it), dtype upcast of the inputs.
class EighGrad final : public DeclaredOp<EighGrad, EighAttrs> {
 public:
  KILN_DECLARED_OP("EighGrad")
};

// QRFull's props: numpy.linalg.qr's mode, "reduced", "complete", "r" or "raw".
struct QRFullAttrs {
  std::string mode = "reduced";
  static constexpr auto Fields() { return std::tuple{AttrField{"mode", &QRFullAttrs::mode}}; }
  absl::Status Check() const;  // one of the four modes
};

// QRFull{mode}: x (m, n), k = min(m, n) -> reduced (q (m, k), r (k, n)); complete (q (m, m),
// r (m, n)); r (r (k, n)); raw (h (n, m), tau (k,)).
class QRFull final : public DeclaredOp<QRFull, QRFullAttrs> {
 public:
  KILN_DECLARED_OP("QRFull")
};

// SVD's props: full (m, m)/(n, n) or reduced (m, k)/(k, n) bases; whether they are computed.
struct SVDAttrs {
  bool full_matrices = true;
  bool compute_uv = true;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"full_matrices", &SVDAttrs::full_matrices},
                      AttrField{"compute_uv", &SVDAttrs::compute_uv}};
  }
};

// SVD{full_matrices, compute_uv}: x (m, n) -> (u, s (k,), vt), or s alone; s descending.
class SVD final : public DeclaredOp<SVD, SVDAttrs> {
 public:
  KILN_DECLARED_OP("SVD")
};

// eig(x): Eig's (w, v).
std::vector<Var> eig(const Var& x);
// eigh(x, UPLO): Eigh{UPLO}'s (w, v).
std::vector<Var> eigh(const Var& x, const std::string& UPLO = "L");
// qr(x, mode): QRFull{mode}'s outputs (one for "r", two otherwise).
std::vector<Var> qr(const Var& x, const std::string& mode = "reduced");
// svd(x, full_matrices, compute_uv): SVD's (u, s, vt), or (s).
std::vector<Var> svd(const Var& x, bool full_matrices = true, bool compute_uv = true);

}  // namespace kiln

#endif  // KILN_CORE_OPS_NLINALG_DECOMP_H_

// The special functions as plain double functions, with scipy.special's values at the edges of
// their domains (NaN outside, inf at poles). special_kernels.cc maps them over tensors; tests call
// them directly.
#ifndef KILN_CORE_OPS_SPECIAL_SCALAR_H_
#define KILN_CORE_OPS_SPECIAL_SCALAR_H_

namespace kiln::special {

// polygamma(1, x): the second derivative of log(gamma(x)).
double TriGamma(double x);
// The n-th derivative of digamma (n a non-negative integer, else NaN).
double Polygamma(double n, double x);
// Owen's T function T(h, a).
double OwensT(double h, double a);
// The regularized lower incomplete gamma function P(k, x).
double GammaInc(double k, double x);
// The regularized upper incomplete gamma function Q(k, x) = 1 - P(k, x).
double GammaIncC(double k, double x);
// d P(k, x) / dk by Gautschi's series (Aesara's GammaIncDer, after Stan), precision 1e-10.
double GammaIncDer(double k, double x);
// d Q(k, x) / dk by the asymptotic expansion or the series (Aesara's GammaIncCDer, after Stan).
double GammaIncCDer(double k, double x);
// The upper incomplete gamma function, gammaincc(k, x) * gamma(k) as Aesara computes it.
double GammaU(double k, double x);
// The lower incomplete gamma function, gammainc(k, x) * gamma(k) as Aesara computes it.
double GammaL(double k, double x);
// The x with P(k, x) == p.
double GammaIncInv(double k, double p);
// The x with Q(k, x) == q.
double GammaIncCInv(double k, double q);
// The regularized incomplete beta function I_x(a, b).
double BetaInc(double a, double b, double x);
// d I_x(p, q) / dp (wrt_p) or / dq by Boik and Robison-Cox's continued fraction (Aesara's
// BetaIncDer): relative error 1e-12, 3 to 200 iterations, else NaN.
double BetaIncDer(double p, double q, double x, bool wrt_p);
// The x with I_x(a, b) == y (0 for y <= 0 and 1 for y >= 1, as scipy's Cephes incbi).
double BetaIncInv(double a, double b, double y);
// The Bessel function of the first kind of real order, J_v(x).
double Jv(double v, double x);
// The modified Bessel function of the first kind of real order, I_v(x).
double Iv(double v, double x);
// I_v(x) * exp(-|x|), finite where I_v overflows.
double Ive(double v, double x);
// K_v(x) * exp(x), the scaled modified Bessel function of the second kind.
double Kve(double v, double x);
// The Gauss hypergeometric function 2F1(a, b; c; z) for real z <= 1 (inf beyond, as scipy).
double Hyp2F1(double a, double b, double c, double z);
// d 2F1 / da (wrt 0), db (1) or dc (2) by Stan's grad_2F1 series (Aesara's Hyp2F1Der),
// precision 1e-14, at least 10 and at most 10^6 terms, else NaN.
double Hyp2F1Der(double a, double b, double c, double z, int wrt);

}  // namespace kiln::special

#endif  // KILN_CORE_OPS_SPECIAL_SCALAR_H_

// The definition of RunScalarKind, included only by the elemwise_kernels_*.cc files, each of
// which instantiates it for a share of the scalar ops so that they compile in parallel.
#ifndef KILN_CORE_OPS_ELEMWISE_KERNELS_IMPL_H_
#define KILN_CORE_OPS_ELEMWISE_KERNELS_IMPL_H_

#include <algorithm>
#include <array>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/ops/elemwise_kernels.h"
#include "core/ops/elemwise_loops.h"
#include "core/ops/scalar_apply.h"
#include "core/ops/sleef_kernels.h"
#include "core/tensor/dtype_dispatch.h"

namespace kiln {
namespace elemwise_internal {

using loops::MakeOperand;

template <typename T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::kBool;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DType::kUInt8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DType::kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DType::kUInt64;
  else if constexpr (std::is_same_v<T, float>)
    return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::kFloat64;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return DType::kComplex64;
  else
    return DType::kComplex128;
}

// Integer division and modulo by zero, and integers to negative powers, are errors (NumPy warns
// and returns garbage; Aesara raises).
template <ScalarOpKind K, typename T>
absl::Status CheckDomain(const std::string& name, std::span<const Tensor> in) {
  if constexpr (scalar::kInt<T> || scalar::kBool<T>) {
    if (K != ScalarOpKind::kIntDiv && K != ScalarOpKind::kMod && K != ScalarOpKind::kPow) {
      return absl::OkStatus();
    }
    const Tensor b = in[1].Contiguous();
    const T* p = b.data<T>();
    for (int64_t i = 0; i < b.size(); ++i) {
      if (K != ScalarOpKind::kPow && p[i] == T(0)) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, ": integer ", K == ScalarOpKind::kMod ? "modulo" : "division", " by zero"));
      }
      if constexpr (std::is_signed_v<T>) {
        if (K == ScalarOpKind::kPow && p[i] < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(name, ": integers to negative integer powers are not allowed"));
        }
      }
    }
  }
  return absl::OkStatus();
}

// Most inputs a flat loop takes (an n-ary add or mul with more walks the shape).
inline constexpr size_t kMaxFlatInputs = 8;

// Whether every input is contiguous in `shape` (flat stride 1) or a single element (stride 0),
// with those strides in `strides`: then flat loops serve, with no per-operand walk.
inline bool FlatStrides(std::span<const Tensor> in, const Shape& shape,
                        std::array<int64_t, kMaxFlatInputs>& strides) {
  if (in.size() > kMaxFlatInputs) return false;
  const bool one_element = ShapeSize(shape) == 1;  // then every input is "contiguous"
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k].size() == 1) {
      strides[k] = one_element ? 1 : 0;
    } else if (in[k].shape() == shape && in[k].is_contiguous()) {
      strides[k] = 1;
    } else {
      return false;
    }
  }
  return true;
}

// o[i] = K(x[i * sx], y[i * sy]) for i in [begin, end), strides 0 or 1 (y null for a unary op).
template <ScalarOpKind K, typename T, typename R>
void FlatRange(int64_t begin, int64_t end, const T* x, int64_t sx, const T* y, int64_t sy, R* o) {
  if (y == nullptr && sx == 1) {
    for (int64_t i = begin; i < end; ++i) o[i] = scalar::Apply<K, T>(x[i]);
  } else if (y == nullptr) {
    std::fill(o + begin, o + end, scalar::Apply<K, T>(x[0]));
  } else if (sx == 1 && sy == 1) {
    for (int64_t i = begin; i < end; ++i) o[i] = scalar::Apply<K, T>(x[i], y[i]);
  } else if (sx == 1) {
    const T c = y[0];
    for (int64_t i = begin; i < end; ++i) o[i] = scalar::Apply<K, T>(x[i], c);
  } else {
    const T c = x[0];
    for (int64_t i = begin; i < end; ++i) o[i] = scalar::Apply<K, T>(c, y[i * sy]);
  }
}

// Runs op K over inputs already converted to T; the result is in out. Contiguous inputs and
// single elements take flat loops (SLEEF's vector functions where it has the op), anything else
// walks the broadcast shape.
template <ScalarOpKind K, typename T>
absl::Status RunOp(const std::string& name, std::span<const Tensor> in, const Shape& shape,
                   Tensor& out) {
  if (absl::Status s = CheckDomain<K, T>(name, in); !s.ok()) return s;
  using R = decltype(scalar::Apply<K, T>(T(), T(), T()));
  // An output already holding a buffer of the right kind (an in-place input) is written in place.
  if (out.raw_data() == nullptr || out.dtype() != DTypeOf<R>() || out.shape() != shape ||
      !out.is_contiguous()) {
    out = Tensor::Empty(DTypeOf<R>(), shape);
  }
  R* o = out.data<R>();
  const int64_t n = ShapeSize(shape);
  const int arity = ScalarOpArity(K);
  std::array<int64_t, kMaxFlatInputs> st{};
  if (FlatStrides(in, shape, st) && arity != 3) {
    const T* x = in[0].data<T>();
    const T* y = in.size() >= 2 ? in[1].data<T>() : nullptr;
    constexpr bool kReal = std::is_same_v<T, double> || std::is_same_v<T, float>;
    if constexpr (kReal && std::is_same_v<R, T> && sleef::Provides(K)) {
      if (st[0] == 1) {
        ParallelFor(n, loops::kParallelGrain, [&](int64_t begin, int64_t end) {
          sleef::Map(K, x + begin, o + begin, end - begin);
        });
        return absl::OkStatus();
      }
    }
    if constexpr (kReal && std::is_same_v<R, T> && sleef::ProvidesBinary(K)) {
      if (st[0] == 1) {
        ParallelFor(n, loops::kParallelGrain, [&](int64_t begin, int64_t end) {
          sleef::Map2(K, x + begin, y + begin * st[1], st[1], o + begin, end - begin);
        });
        return absl::OkStatus();
      }
    }
    ParallelFor(n, loops::kParallelGrain, [&](int64_t begin, int64_t end) {
      FlatRange<K>(begin, end, x, st[0], y, st[1], o);
      if constexpr (std::is_same_v<R, T>) {
        // n-ary add and mul fold left to right into the output.
        for (size_t k = 2; k < in.size(); ++k) {
          FlatRange<K>(begin, end, static_cast<const T*>(o), 1, in[k].data<T>(), st[k], o);
        }
      }
    });
    return absl::OkStatus();
  }
  auto a = MakeOperand<T>(in[0], shape);
  if (in.size() == 1) {
    loops::Map1(shape, o, a, [](T x) { return scalar::Apply<K, T>(x); });
  } else if (arity == 3) {
    loops::Map3(shape, o, a, MakeOperand<T>(in[1], shape), MakeOperand<T>(in[2], shape),
                [](T x, T y, T z) { return scalar::Apply<K, T>(x, y, z); });
  } else {
    auto f = [](T x, T y) { return scalar::Apply<K, T>(x, y); };
    loops::Map2(shape, o, a, MakeOperand<T>(in[1], shape), f);
    if constexpr (std::is_same_v<R, T>) {
      for (size_t k = 2; k < in.size(); ++k) {
        loops::Operand<T> acc{o, ContiguousStrides(shape), true, false};
        loops::Map2(shape, o, acc, MakeOperand<T>(in[k], shape), f);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace elemwise_internal

template <ScalarOpKind K>
absl::Status RunScalarKind(const std::string& name, DType compute, std::span<const Tensor> in,
                           const Shape& shape, Tensor& out) {
  return DispatchDType(compute, [&](auto type_tag) -> absl::Status {
    using T = typename decltype(type_tag)::type;
    if constexpr (!std::is_same_v<T, Eigen::half> && scalar::Supports<K, T>()) {
      return elemwise_internal::RunOp<K, T>(name, in, shape, out);
    } else {
      return absl::InternalError(absl::StrCat(name, ": no kernel for dtype ", DTypeName(compute)));
    }
  });
}

namespace elemwise_internal {

using ScalarKernel = decltype(&RunScalarKind<ScalarOpKind::kAdd>);

// RunScalarKind of scalar op I when the table puts its kernels in `unit` (which instantiates
// it), else null.
template <KernelUnit unit, int I>
constexpr ScalarKernel KernelIn() {
  if constexpr (kScalarKernelUnits[I] == unit) {
    return &RunScalarKind<static_cast<ScalarOpKind>(I)>;
  } else {
    return nullptr;
  }
}

template <KernelUnit unit, int... I>
constexpr std::array<ScalarKernel, sizeof...(I)> KernelsIn(std::integer_sequence<int, I...>) {
  return {KernelIn<unit, I>()...};
}

}  // namespace elemwise_internal

// Instantiates the kernels of every scalar op whose kernel unit (the last column of the table in
// scalar_op.h) is `unit`: the one line of each elemwise_kernels_<unit>.cc.
#define KILN_INSTANTIATE_KERNEL_UNIT(unit)                                                 \
  extern const std::array<elemwise_internal::ScalarKernel, kNumScalarOps> kKernels_##unit; \
  const std::array<elemwise_internal::ScalarKernel, kNumScalarOps> kKernels_##unit =       \
      elemwise_internal::KernelsIn<KernelUnit::unit>(                                      \
          std::make_integer_sequence<int, kNumScalarOps>());

}  // namespace kiln

#endif  // KILN_CORE_OPS_ELEMWISE_KERNELS_IMPL_H_

#include "core/ops/random.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/random_kernels.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"

namespace kiln {

KILN_REGISTER_OP(RandomVariable);

namespace {

// Aesara's all_dtypes: the dtype input is an index into it.
constexpr DType kAllDtypes[] = {
    DType::kBool,    DType::kInt8,    DType::kInt16,     DType::kInt32,     DType::kInt64,
    DType::kUInt8,   DType::kUInt16,  DType::kUInt32,    DType::kUInt64,    DType::kFloat16,
    DType::kFloat32, DType::kFloat64, DType::kComplex64, DType::kComplex128};

int64_t DtypeIndex(DType dtype) {
  return std::find(std::begin(kAllDtypes), std::end(kAllDtypes), dtype) - std::begin(kAllDtypes);
}

const random::Distribution& DistOf(const RandomVariableAttrs& a) {
  return *random::FindDistribution(a.name);  // Check() made sure it exists
}

// The first input index of the distribution's parameters.
constexpr size_t kFirstParam = 3;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EB;
  return x ^ (x >> 31);
}

// The static batch shape of params broadcast together, or an error naming the two that differ.
absl::StatusOr<StaticShape> BroadcastBatch(const RandomVariable& op,
                                           const std::vector<VariablePtr>& in,
                                           const std::vector<int>& ndims_params) {
  StaticShape batch;
  for (size_t k = 0; k < ndims_params.size(); ++k) {
    const StaticShape& s = in[kFirstParam + k]->tensor_type()->shape();
    const size_t nb = s.size() - ndims_params[k];
    if (nb > batch.size()) batch.insert(batch.begin(), nb - batch.size(), StaticDim(1));
    for (size_t d = 0; d < nb; ++d) {
      StaticDim& b = batch[batch.size() - nb + d];
      const StaticDim& x = s[d];
      if (x == 1) continue;
      if (b == 1 || !b) {
        b = (b == 1 || !x) ? x : b;
        continue;
      }
      if (x && *x != *b) {
        return Invalid(op, absl::StrCat("input ", kFirstParam + k, " has type ",
                                        in[kFirstParam + k]->type()->ToString(),
                                        ", whose batch dims do not broadcast with the others'"));
      }
    }
  }
  return batch;
}

// The static shape of one draw: the last ndim_supp dims of the parameter that gives it (the
// first; multinomial's p), all of x's for permutation, or (n,) for a constant n.
StaticShape SuppShape(const RandomVariableAttrs& a, const std::vector<VariablePtr>& in) {
  if (a.ndim_supp == 0) return {};
  const VariablePtr& x = in[kFirstParam + DistOf(a).supp_param];
  const StaticShape& s = x->tensor_type()->shape();
  if (s.empty()) return {ConstantInt(x)};
  if (a.name == "permutation") return s;  // x's rows, shuffled
  return StaticShape(s.end() - a.ndim_supp, s.end());
}

// A float parameter sampled as an integer (binomial's n) must be finite and within int64, as
// NumPy's cast to int64 needs.
absl::Status CheckIntegral(const RandomVariable& op, const random::Distribution& dist, size_t k,
                           const Tensor& t) {
  const Tensor v = t.AsType(DType::kFloat64);
  for (int64_t i = 0; i < v.size(); ++i) {
    const double x = v.data<double>()[i];
    if (!(std::fabs(x) < 0x1p63)) {
      return absl::InvalidArgumentError(absl::StrCat(op.Name(), ": parameter ", dist.params[k],
                                                     " must be an integer, got ", x,
                                                     " at index ", i));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RandomVariableAttrs::Check() const {
  const random::Distribution* d = random::FindDistribution(name);
  if (d == nullptr) {
    std::vector<std::string> names;
    for (const random::Distribution& x : random::Distributions()) names.push_back(x.name);
    return absl::InvalidArgumentError(absl::StrCat("RandomVariable: unknown distribution '", name,
                                                   "' (known: ", absl::StrJoin(names, ", "), ")"));
  }
  if (ndim_supp != d->ndim_supp || ndims_params != d->ndims_params || dtype != d->dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, "_rv: ndim_supp, ndims_params and dtype must be ", d->ndim_supp, ", (",
                     absl::StrJoin(d->ndims_params, ", "), ") and ", d->dtype));
  }
  return absl::OkStatus();
}

std::string RandomVariable::Name() const {
  const RandomVariableAttrs& a = attrs();
  std::string params = absl::StrJoin(a.ndims_params, ", ");
  if (a.ndims_params.size() == 1) params += ",";
  return absl::StrCat(a.name, "_rv{", a.ndim_supp, ", (", params, "), ", a.dtype, ", ",
                      a.inplace ? "True" : "False", "}");
}

absl::StatusOr<ApplyPtr> RandomVariable::MakeNode(std::vector<VariablePtr> inputs) const {
  const RandomVariableAttrs& a = attrs();
  if (inputs.size() != kFirstParam + a.ndims_params.size()) {
    return Invalid(*this, absl::StrCat("expects ", kFirstParam + a.ndims_params.size(),
                                       " inputs (rng, size, dtype and ", a.ndims_params.size(),
                                       " parameters), got ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->tensor_type() == nullptr) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                         ", which is not a TensorType"));
    }
  }
  const TensorType* rng = inputs[0]->tensor_type();
  if (rng->dtype() != DType::kUInt64 || rng->ndim() != 1 || rng->shape()[0].value_or(2) != 2) {
    return Invalid(*this, absl::StrCat("input 0 (rng) has type ", rng->ToString(), " but ",
                                       RngStateType()->ToString(), " is needed"));
  }
  ASSIGN_OR_RETURN(const TensorType* size,
                   ExpectTensor(*this, inputs, 1, 1, true, "an integer vector (size)"));
  const std::optional<int64_t> dtype_index = ConstantInt(inputs[2]);
  if (!dtype_index || *dtype_index < 0 ||
      *dtype_index >= static_cast<int64_t>(std::size(kAllDtypes)) ||
      inputs[2]->tensor_type()->ndim() != 0) {
    return Invalid(*this, absl::StrCat("input 2 (dtype) has type ", inputs[2]->type()->ToString(),
                                       " but a constant index into Aesara's all_dtypes is "
                                       "needed"));
  }
  for (size_t k = 0; k < a.ndims_params.size(); ++k) {
    const TensorType* p = inputs[kFirstParam + k]->tensor_type();
    const bool scalar_count = a.name == "permutation" || (a.name == "choice" && k == 0);
    if (p->ndim() < a.ndims_params[k] && !(scalar_count && p->ndim() == 0)) {
      return Invalid(*this, absl::StrCat("input ", kFirstParam + k, " has type ", p->ToString(),
                                         " but a parameter of at least ", a.ndims_params[k],
                                         " dims is needed"));
    }
  }
  // integers' and randint's bounds must be integers (binomial's n may be a float, as NumPy
  // truncates it).
  const bool integer_bounds = a.name == "integers" || a.name == "randint";
  for (size_t k = 0; integer_bounds && k < 2; ++k) {
    const TensorType* p = inputs[kFirstParam + k]->tensor_type();
    if (!IsInteger(p->dtype())) {
      return Invalid(*this, absl::StrCat("input ", kFirstParam + k, " has type ", p->ToString(),
                                         " but an integer parameter is needed"));
    }
  }
  const TensorType* x = inputs[kFirstParam]->tensor_type();
  if ((a.name == "permutation" || a.name == "choice") && x->ndim() == 0 && !IsInteger(x->dtype())) {
    return Invalid(*this, absl::StrCat("input 3 has type ", x->ToString(),
                                       " but a vector or an integer scalar is needed"));
  }
  if (a.name == "choice" && (x->ndim() > 1 || inputs[4]->tensor_type()->ndim() != 1 ||
                             inputs[5]->tensor_type()->ndim() != 0)) {
    return Invalid(*this,
                   "expects a vector or an integer a, a vector p (empty for None) and a "
                   "scalar replace");
  }
  StaticShape shape;
  if (a.name != "permutation" && a.name != "choice") {
    ASSIGN_OR_RETURN(shape, BroadcastBatch(*this, inputs, a.ndims_params));
  }
  // The size's entries, where constant (permutation has no size: Aesara ignores it).
  if (a.name != "permutation" && (size->shape()[0] != 0 || a.name == "choice")) {
    shape.assign(size->shape()[0].value_or(0), std::nullopt);
    if (inputs[1]->is_constant()) {
      const Tensor t = static_cast<const Constant&>(*inputs[1]).data().AsType(DType::kInt64);
      shape.assign(t.data<int64_t>(), t.data<int64_t>() + t.size());
      // A negative entry is refused when the op runs; here it only makes no static dim.
      for (StaticDim& d : shape) {
        if (d && *d < 0) d = std::nullopt;
      }
    } else if (const Apply* owner = inputs[1]->owner();
               owner != nullptr && owner->op().Is<MakeVector>()) {
      for (size_t d = 0; d < shape.size(); ++d) shape[d] = ConstantInt(owner->inputs()[d]);
    }
  }
  if (a.name != "choice") {
    const StaticShape supp = SuppShape(a, inputs);
    shape.insert(shape.end(), supp.begin(), supp.end());
  }
  const DType dtype = kAllDtypes[*dtype_index];
  // Constant sizes like (2^62, 2^62) make no type: later products of them would overflow.
  RETURN_IF_ERROR(CheckKnownDims(*this, shape));
  return Apply::Make(self(), std::move(inputs), {RngStateType(), TensorType::Make(dtype, shape)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> RandomVariable::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const RandomVariableAttrs& a = attrs();
  const VariablePtr& size = node.inputs()[1];
  std::vector<VariablePtr> dims;
  const StaticShape& out = node.outputs()[1]->tensor_type()->shape();
  const StaticDim n_size = size->tensor_type()->shape()[0];
  if (!n_size && a.name != "permutation") {
    return absl::UnimplementedError(Name() + ": a size of unknown length");
  }
  if (a.name != "permutation" && (*n_size > 0 || a.name == "choice")) {
    for (int i = 0; i < *n_size; ++i) {
      dims.push_back(out[i] ? ConstDim(*out[i]) : subtensor(Var(size), {Index(i)}).ptr());
    }
  } else if (a.name != "permutation") {
    const size_t nb = out.size() - a.ndim_supp;
    for (size_t d = 0; d < nb; ++d) {
      std::vector<VariablePtr> candidates;
      for (size_t k = 0; k < a.ndims_params.size(); ++k) {
        const std::vector<VariablePtr>& s = in[kFirstParam + k];
        const size_t pb = s.size() - a.ndims_params[k];
        if (d + pb >= nb) candidates.push_back(s[d + pb - nb]);
      }
      dims.push_back(BroadcastDim(candidates));
    }
  }
  if (a.name != "choice" && a.ndim_supp > 0) {
    const std::vector<VariablePtr>& x = in[kFirstParam + DistOf(a).supp_param];
    if (x.empty()) {
      dims.push_back(cast(Var(node.inputs()[kFirstParam]), DType::kInt64).ptr());  // n values
    } else {
      dims.insert(dims.end(), a.name == "permutation" ? x.begin() : x.end() - a.ndim_supp, x.end());
    }
  }
  return std::vector<std::vector<VariablePtr>>{in[0], dims};
}

absl::Status RandomVariable::Perform(const Apply& node, std::span<const Tensor> in,
                                     std::vector<Tensor>& out) const {
  const RandomVariableAttrs& a = attrs();
  const random::Distribution& dist = DistOf(a);
  if (in[0].size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        Name(), ": the rng state has shape ", ShapeToString(in[0].shape()), " but (2,) is needed"));
  }
  const Tensor state = in[0].Contiguous();
  const uint64_t key = state.data<uint64_t>()[0], counter = state.data<uint64_t>()[1];
  const Tensor size_t_ = in[1].AsType(DType::kInt64);
  Shape batch(size_t_.data<int64_t>(), size_t_.data<int64_t>() + size_t_.size());
  for (int64_t d : batch) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(Name(), ": size has a negative entry: ", ShapeToString(batch)));
    }
  }
  const DType dtype = node.outputs()[1]->tensor_type()->dtype();
  Tensor draw;
  int64_t used = 1;
  if (a.name == "permutation" || a.name == "choice") {
    const Tensor& x = in[kFirstParam];
    const bool count = x.ndim() == 0;  // permutation(n), choice(n, ...): arange(n)
    const int64_t len = count ? ScalarInt(x) : x.shape()[0];
    if (len < 0) return absl::InvalidArgumentError(absl::StrCat(Name(), ": a population of ", len));
    RETURN_IF_ERROR(CheckShape(Name() + " population", {len}, DType::kInt64));
    Tensor idx;  // int64 indices into the population
    Shape shape;
    if (a.name == "permutation") {
      ASSIGN_OR_RETURN(idx, random::Permutation(key, counter, len));
      shape = count ? Shape{len} : x.shape();
    } else {
      const Tensor p = in[kFirstParam + 1].AsType(DType::kFloat64);
      RETURN_IF_ERROR(CheckShape(Name(), batch, DType::kInt64));
      const int64_t n = ShapeSize(batch);
      ASSIGN_OR_RETURN(idx, random::Choice(key, counter, len, {p.data<double>(), size_t(p.size())},
                                           ScalarInt(in[kFirstParam + 2]) != 0, n));
      shape = batch;
      used = std::max<int64_t>(n, 1);
    }
    if (count) {
      draw = idx.View(shape, ContiguousStrides(shape)).AsType(dtype);
    } else {  // gather x's rows (its values for a vector)
      const Tensor values = x.AsType(dtype);
      const int64_t item = DTypeSize(dtype) * (len > 0 ? values.size() / len : 0);
      RETURN_IF_ERROR(CheckShape(Name(), shape, dtype));
      draw = Tensor::Empty(dtype, shape);
      const int64_t* rows = idx.data<int64_t>();
      for (int64_t i = 0; i < idx.size(); ++i) {
        std::memcpy(static_cast<char*>(draw.raw_data()) + i * item,
                    static_cast<const char*>(values.raw_data()) + rows[i] * item, item);
      }
    }
  } else {
    // The batch: size, else the parameters' batch dims broadcast.
    if (batch.empty()) {
      for (size_t k = 0; k < a.ndims_params.size(); ++k) {
        const Shape& s = in[kFirstParam + k].shape();
        const size_t nb = s.size() - a.ndims_params[k];
        if (nb > batch.size()) batch.insert(batch.begin(), nb - batch.size(), 1);
        for (size_t d = 0; d < nb; ++d) {
          int64_t& b = batch[batch.size() - nb + d];
          if (b == 1) b = s[d];
        }
      }
    }
    std::vector<random::Param> params(a.ndims_params.size());
    Shape supp_out;
    for (size_t k = 0; k < params.size(); ++k) {
      const Tensor& t = in[kFirstParam + k];
      const bool integer = dist.IsIntegerParam(k);
      if (integer && !IsInteger(t.dtype())) RETURN_IF_ERROR(CheckIntegral(*this, dist, k, t));
      Shape supp(t.shape().end() - a.ndims_params[k], t.shape().end());
      Shape full = batch;
      full.insert(full.end(), supp.begin(), supp.end());
      const Tensor values = t.AsType(integer ? DType::kInt64 : DType::kFloat64);
      std::optional<Tensor> view = values.BroadcastTo(full);
      if (!view) {
        return absl::InvalidArgumentError(
            absl::StrCat(Name(), ": parameter ", k, " has shape ", ShapeToString(t.shape()),
                         ", which does not broadcast to the draws' shape ", ShapeToString(full)));
      }
      const int64_t supp_size = ShapeSize(supp);
      params[k].values = values;
      for (size_t d = 0; d < batch.size(); ++d) {
        params[k].batch_strides.push_back(view->strides()[d] / std::max<int64_t>(supp_size, 1));
      }
      params[k].supp_shape = supp;
      if (k == static_cast<size_t>(dist.supp_param)) supp_out = supp;
    }
    if (a.name == "multivariate_normal" &&
        params[1].supp_shape != Shape{supp_out[0], supp_out[0]}) {
      return absl::InvalidArgumentError(absl::StrCat(Name(), ": cov has shape ",
                                                     ShapeToString(params[1].supp_shape),
                                                     " but mean has ", supp_out[0], " values"));
    }
    Shape full = batch;
    if (a.ndim_supp > 0) full.insert(full.end(), supp_out.begin(), supp_out.end());
    RETURN_IF_ERROR(CheckShape(Name(), full, dtype));
    const bool discrete = std::string(dist.dtype) == "int64";
    draw = Tensor::Empty(discrete ? DType::kInt64 : DType::kFloat64, full);
    RETURN_IF_ERROR(random::Sample(dist, key, counter, batch, params, draw));
    if (draw.dtype() != dtype) draw = draw.AsType(dtype);
    used = std::max<int64_t>(ShapeSize(batch), 1);
  }
  ASSIGN_OR_RETURN(Tensor next, Tensor::Of<uint64_t>(DType::kUInt64, {2}, {key, counter + used}));
  out[0] = std::move(next);
  out[1] = std::move(draw);
  return absl::OkStatus();
}

std::vector<Var> RandomVariable::LOp(const Apply& node, const std::vector<Var>&) const {
  std::vector<Var> grads;
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    grads.push_back(grad_undefined(Name(), static_cast<int>(i), node.inputs()[i],
                                   "No gradient defined for random variables"));
  }
  return grads;
}

std::vector<std::vector<bool>> RandomVariable::ConnectionPattern(const Apply& node) const {
  // The draw depends on every input; the next state only on the state.
  std::vector<std::vector<bool>> pattern(node.inputs().size(), {false, true});
  pattern[0][0] = true;
  return pattern;
}

TensorTypePtr RngStateType() { return TensorType::Make(DType::kUInt64, {2}); }

Tensor RngState(uint64_t seed) {
  return *Tensor::Of<uint64_t>(DType::kUInt64, {2}, {SplitMix64(seed), 0});
}

absl::StatusOr<OpPtr> RandomVariableOp(absl::string_view name) {
  const random::Distribution* d = random::FindDistribution(name);
  if (d == nullptr) {
    RandomVariableAttrs bad{std::string(name)};
    return bad.Check();
  }
  return OpPtr(std::make_shared<RandomVariable>(
      RandomVariableAttrs{d->name, d->ndim_supp, d->ndims_params, d->dtype, false}));
}

absl::StatusOr<std::vector<Var>> random_variable(absl::string_view name, const Var& rng,
                                                 std::vector<Var> params, std::vector<int64_t> size,
                                                 std::optional<DType> floatx) {
  ASSIGN_OR_RETURN(OpPtr op, RandomVariableOp(name));
  const random::Distribution& d = *random::FindDistribution(name);
  DType dtype = floatx.value_or(DType::kFloat64);
  if (std::string(d.dtype) == "int64") dtype = DType::kInt64;
  if (std::string(d.dtype) == "None" && !params.empty()) {
    RETURN_IF_ERROR(params[0].status());
    dtype = params[0].dtype();
  }
  ASSIGN_OR_RETURN(Tensor size_t_, Tensor::FromValues<int64_t>(
                                       DType::kInt64, {static_cast<int64_t>(size.size())}, size));
  std::vector<VariablePtr> in = {rng.ptr(), constant(size_t_).ptr(),
                                 constant(DtypeIndex(dtype)).ptr()};
  for (const Var& p : params) {
    RETURN_IF_ERROR(p.status());
    in.push_back(p.ptr());
  }
  RETURN_IF_ERROR(rng.status());
  ASSIGN_OR_RETURN(ApplyPtr node, op->MakeNode(std::move(in)));
  return std::vector<Var>{Var(node->outputs()[0]), Var(node->outputs()[1])};
}

}  // namespace kiln

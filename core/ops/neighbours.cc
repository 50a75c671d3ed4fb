#include "core/ops/neighbours.h"

#include <array>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(Images2Neibs);

namespace {

enum class Mode { kValid, kIgnoreBorders, kWrapCentered, kHalf, kFull };

constexpr std::array<std::pair<const char*, Mode>, 5> kModes = {{
    {"valid", Mode::kValid},
    {"half", Mode::kHalf},
    {"full", Mode::kFull},
    {"wrap_centered", Mode::kWrapCentered},
    {"ignore_borders", Mode::kIgnoreBorders},
}};

std::optional<Mode> ModeOf(const std::string& name) {
  for (const auto& [n, m] : kModes) {
    if (name == n) return m;
  }
  return std::nullopt;
}

// Python's a // b (rounding toward minus infinity) for b > 0.
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0 && a < 0) ? 1 : 0); }

// The windows along one image axis of length `len`, for a window of `size` every `step`
// (Aesara's grid_c / grid_d), or the error Aesara raises; `axis` is 0 for rows, 1 for columns.
absl::StatusOr<int64_t> GridOf(const Op& op, Mode mode, int axis, int64_t len, int64_t size,
                               int64_t step) {
  const std::string inconsistent =
      absl::StrCat("neib_shape[", axis, "]=", size, ", neib_step[", axis, "]=", step,
                   " and ten4.shape[", axis + 2, "]=", len, " not consistent");
  switch (mode) {
    case Mode::kWrapCentered:
      return len / step + (len % step != 0 ? 1 : 0);
    case Mode::kIgnoreBorders: {
      const int64_t grid = 1 + FloorDiv(len - size, step);
      if (grid < 0) {
        return Invalid(
            op, absl::StrCat("neib_shape[", axis, "]=", size, " is larger than ", "ten4.shape[",
                             axis + 2, "]=", len, " by more than one ", "step of ", step));
      }
      return grid;
    }
    case Mode::kValid:
      if (len < size || (len - size) % step != 0) return Invalid(op, inconsistent);
      return 1 + (len - size) / step;
    case Mode::kHalf:
      if (len < size || (len - size % 2) % step != 0) return Invalid(op, inconsistent);
      return 1 + (len - size % 2) / step;
    case Mode::kFull:  // len >= size bounds len + size - 2
      if (len < size || (len + size - 2) % step != 0) return Invalid(op, inconsistent);
      return 1 + (len + size - 2) / step;
  }
  return Invalid(op, "unknown mode");
}

// The first image row (or column) a window's row (column) 0 reads, relative to its grid
// position times the step: the padding of 'half' and 'full', the centring of 'wrap_centered'.
int64_t OffsetOf(Mode mode, int64_t size) {
  switch (mode) {
    case Mode::kWrapCentered:
    case Mode::kHalf:
      return size / 2;
    case Mode::kFull:
      return size - 1;
    default:
      return 0;
  }
}

// The image index a window element reads, or -1 for the zero padding.
int64_t SourceIndex(Mode mode, int64_t pos, int64_t len) {
  if (mode == Mode::kWrapCentered) {
    if (pos < 0) return pos + len;
    if (pos >= len) return pos - len;
    return pos;
  }
  return pos < 0 || pos >= len ? -1 : pos;
}

// The two entries of neib_shape or neib_step, as int64.
absl::StatusOr<std::array<int64_t, 2>> PairOf(const Op& op, const Tensor& t, const char* what) {
  if (t.ndim() != 1 || t.size() != 2) {
    return Invalid(op, absl::StrCat(what, " has shape ", ShapeToString(t.shape()),
                                    " but it has to contain 2 elements"));
  }
  const Tensor v = t.AsType(DType::kInt64);
  return std::array<int64_t, 2>{v.data<int64_t>()[0], v.data<int64_t>()[1]};
}

// Entry i of an integer vector, as an int64 scalar variable.
Var EntryOf(const VariablePtr& v, int i) { return cast(subtensor(Var(v), {i}), DType::kInt64); }

bool SameValue(const VariablePtr& a, const VariablePtr& b) {
  if (a == b) return true;
  if (!a->is_constant() || !b->is_constant()) return false;
  return static_cast<const Constant&>(*a).data().BitwiseEquals(
      static_cast<const Constant&>(*b).data());
}

}  // namespace

absl::Status Images2NeibsAttrs::Check() const {
  if (!ModeOf(mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Only modes valid, half, full, wrap_centered, ignore_borders have been "
                     "implemented for Images2Neibs, not '",
                     mode, "'"));
  }
  return absl::OkStatus();
}

std::string Images2Neibs::Name() const { return absl::StrCat("Images2Neibs{", mode(), "}"); }

absl::StatusOr<ApplyPtr> Images2Neibs::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() == 2) inputs.push_back(inputs[1]);  // neib_step None: neib_shape
  if (inputs.size() != 3) return Invalid(*this, "expects 3 inputs (ten4, neib_shape, neib_step)");
  ASSIGN_OR_RETURN(const TensorType* ten4,
                   ExpectTensor(*this, inputs, 0, 4, false, "a 4-d tensor"));
  for (size_t i : {1, 2}) {
    ASSIGN_OR_RETURN(const TensorType* t,
                     ExpectTensor(*this, inputs, i, 1, true, "an integer vector of 2 entries"));
    if (t->shape()[0] && *t->shape()[0] != 2) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", t->ToString(),
                                         " but an integer vector of 2 entries is needed"));
    }
  }
  return Apply::Make(self(), std::move(inputs),
                     {TensorType::Make(ten4->dtype(), StaticShape{std::nullopt, std::nullopt})});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Images2Neibs::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const Mode mode = *ModeOf(this->mode());
  const std::vector<VariablePtr>& s = in[0];
  const Var c = EntryOf(node.inputs()[1], 0), d = EntryOf(node.inputs()[1], 1);
  const Var sx = EntryOf(node.inputs()[2], 0), sy = EntryOf(node.inputs()[2], 1);
  auto grid = [&](const Var& len, const Var& size, const Var& step) -> Var {
    switch (mode) {
      case Mode::kWrapCentered:  // ceil_intdiv
        return int_div(len, step) + cast(neq(len % step, literal(0)), DType::kInt64);
      case Mode::kHalf:
        return 1 + int_div(len - size % 2, step);
      case Mode::kFull:
        return 1 + int_div(len + size - 2, step);
      default:
        return 1 + int_div(len - size, step);
    }
  };
  const Var rows = grid(Var(s[2]), c, sx) * grid(Var(s[3]), d, sy) * Var(s[1]) * Var(s[0]);
  const Var cols = c * d;
  if (!rows.ok()) return rows.status();
  if (!cols.ok()) return cols.status();
  return std::vector<ShapeVars>{{rows.ptr(), cols.ptr()}};
}

absl::Status Images2Neibs::Perform(const Apply&, std::span<const Tensor> inputs,
                                   std::vector<Tensor>& outputs) const {
  const Mode mode = *ModeOf(this->mode());
  ASSIGN_OR_RETURN(const auto shape, PairOf(*this, inputs[1], "neib_shape"));
  ASSIGN_OR_RETURN(const auto step, PairOf(*this, inputs[2], "neib_step"));
  const auto [c, d] = shape;
  if (step[0] <= 0 || step[1] <= 0) {
    return Invalid(*this, absl::StrCat("neib_step wrong step ; values <= 0. Got [", step[0], " ",
                                       step[1], "]"));
  }
  if (c <= 0 || d <= 0) {
    return Invalid(*this, absl::StrCat("neib_shape values <=0. Got [", c, " ", d, "]"));
  }
  const Tensor x = inputs[0].Contiguous();
  const int64_t batch = x.shape()[0], stack = x.shape()[1];
  const int64_t height = x.shape()[2], width = x.shape()[3];
  if (mode == Mode::kWrapCentered) {
    if (c % 2 != 1 || d % 2 != 1) {
      return Invalid(*this, "in mode wrap_centered need patch with odd shapes");
    }
    if (height < c || width < d) {
      return Invalid(*this, absl::StrCat("in wrap_centered mode, don't support image shapes "
                                         "smaller then the patch shapes: neib_shape=(",
                                         c, ",", d, "), ten4[2:]=[", height, ",", width, "]"));
    }
  }
  ASSIGN_OR_RETURN(const int64_t grid_c, GridOf(*this, mode, 0, height, c, step[0]));
  ASSIGN_OR_RETURN(const int64_t grid_d, GridOf(*this, mode, 1, width, d, step[1]));
  // The output's dims in checked arithmetic: a window of 2^31 x 2^31 must not wrap.
  std::optional<int64_t> rows = CheckedMul(grid_c, grid_d);
  if (rows) rows = CheckedMul(*rows, stack);
  if (rows) rows = CheckedMul(*rows, batch);
  const std::optional<int64_t> cols = CheckedMul(c, d);
  if (!rows || !cols || *rows > kMaxTensorBytes || *cols > kMaxTensorBytes) {
    return Invalid(
        *this, absl::StrCat("the output of ", grid_c, " x ", grid_d, " windows of ", c, " x ", d,
                            " over ", batch, " x ", stack, " images is too large"));
  }
  const Shape out_shape{*rows, *cols};
  RETURN_IF_ERROR(CheckOutputShape(*this, out_shape, x.dtype()));
  Tensor out = Tensor::Empty(x.dtype(), out_shape);
  const int64_t esize = DTypeSize(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  const int64_t off_r = OffsetOf(mode, c), off_c = OffsetOf(mode, d);
  InterruptPoller poller;
  // Rows of the output in order: image (n, s), window row a, window column b; within a row, the
  // window's rows i and columns j. Each window row is copied as one span when it lies inside
  // the image, element by element where it meets padding or wraps.
  for (int64_t img = 0; img < batch * stack; ++img) {
    const char* image = src + img * height * width * esize;
    for (int64_t a = 0; a < grid_c; ++a) {
      for (int64_t b = 0; b < grid_d; ++b) {
        const int64_t x0 = b * step[1] - off_c;
        const bool inside = x0 >= 0 && x0 + d <= width;
        for (int64_t i = 0; i < c; ++i, dst += d * esize) {
          const int64_t y = SourceIndex(mode, a * step[0] + i - off_r, height);
          if (y < 0) {
            std::memset(dst, 0, d * esize);
            continue;
          }
          const char* line = image + y * width * esize;
          if (inside) {
            std::memcpy(dst, line + x0 * esize, d * esize);
            continue;
          }
          for (int64_t j = 0; j < d; ++j) {
            const int64_t xj = SourceIndex(mode, x0 + j, width);
            if (xj < 0) {
              std::memset(dst + j * esize, 0, esize);
            } else {
              std::memcpy(dst + j * esize, line + xj * esize, esize);
            }
          }
        }
        RETURN_IF_ERROR(poller.Tick(*cols));
      }
    }
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

std::vector<Var> Images2Neibs::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Mode mode = *ModeOf(this->mode());
  const Var x(node.inputs()[0]);
  const VariablePtr& neib_shape = node.inputs()[1];
  const VariablePtr& neib_step = node.inputs()[2];
  const Var undefined_shape = grad_undefined(Name(), 1, neib_shape);
  const Var undefined_step = grad_undefined(Name(), 2, neib_step);
  // Disjoint windows: Aesara's neibs2images of the gradient.
  if ((mode == Mode::kValid || mode == Mode::kIgnoreBorders) && SameValue(neib_shape, neib_step)) {
    return {neibs2images(g[0], Var(neib_shape), shape(x), this->mode()), undefined_shape,
            undefined_step};
  }
  // 'valid' with any step: Aesara adds each window position's gradient into the pixels it read
  // (a scan over positions); here the windows of the pixels' flat indices say where each
  // gradient entry goes, and one inc_subtensor adds them all.
  if (mode == Mode::kValid) {
    const Var size = prod(shape(x));
    const Var where =
        ApplyOp(node.op_ptr(), {reshape(arange(size), shape(x)), Var(neib_shape), Var(neib_step)});
    const Var flat = zeros_like(flatten(x), g[0].ok() ? g[0].dtype() : x.dtype());
    const Var gx = reshape(inc_subtensor(take(flat, flatten(where)), flatten(g[0])), shape(x));
    return {gx, undefined_shape, undefined_step};
  }
  return {grad_not_implemented(Name(), 0, x.ptr()), undefined_shape, undefined_step};
}

Var images2neibs(const Var& ten4, const Var& neib_shape, const std::optional<Var>& neib_step,
                 const std::string& mode) {
  auto op = std::make_shared<Images2Neibs>(Images2NeibsAttrs{mode});
  if (absl::Status s = op->attrs().Check(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Images2Neibs: ", s.message()));
  }
  if (!neib_step) return ApplyOp(OpPtr(op), {ten4, neib_shape});
  return ApplyOp(OpPtr(op), {ten4, neib_shape, *neib_step});
}

Var neibs2images(const Var& neibs, const Var& neib_shape, const Var& original_shape,
                 const std::string& mode) {
  if (mode != "valid" && mode != "ignore_borders") {
    return absl::UnimplementedError(absl::StrCat("neibs2images do not support mode=", mode));
  }
  for (const Var* v : {&neibs, &neib_shape, &original_shape}) {
    if (!v->ok()) return *v;
  }
  auto entry = [](const Var& v, int i) { return subtensor(v, {i}); };
  const Var new_neib_shape =
      stack({int_div(entry(original_shape, -1), entry(neib_shape, 1)), entry(neib_shape, 1)});
  const Var output_2d =
      images2neibs(dimshuffle(neibs, {kX, kX, 0, 1}), new_neib_shape, std::nullopt, mode);
  if (mode == "valid") return reshape(output_2d, original_shape);
  // 'ignore_borders': the windows fill the largest multiple of the window's shape, and zeros the
  // rest (set_subtensor keeps a symbolic original_shape checked at run time, as in Aesara).
  Var valid_shape = original_shape;
  for (int d : {2, 3}) {
    valid_shape = set_subtensor(
        entry(valid_shape, d),
        int_div(entry(valid_shape, d), entry(neib_shape, d - 2)) * entry(neib_shape, d - 2));
  }
  Var output_4d = reshape(output_2d, valid_shape);
  for (int d : {2, 3}) {
    std::vector<Var> pad_shape;
    for (int k = 0; k < 4; ++k) pad_shape.push_back(shape_i(output_4d, k));
    pad_shape[d] = entry(original_shape, d) - entry(valid_shape, d);
    output_4d = concatenate({output_4d, zeros(pad_shape)}, d);
  }
  return output_4d;
}

}  // namespace kiln

// Op::Attrs for every op family, and MakeOp, its inverse.
#include "core/ops/op_registry.h"

#include <cstring>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/ops/alloc.h"
#include "core/ops/composite.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/gradient_ops.h"
#include "core/ops/indexing.h"
#include "core/ops/linalg.h"
#include "core/ops/nnet.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"

namespace kiln {
namespace {

absl::Status Bad(OpKind kind, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), ": ", why));
}

absl::StatusOr<DType> DTypeAttr(const OpAttrs& a, const std::string& key) {
  absl::StatusOr<std::string> name = a.String(key);
  if (!name.ok()) return name.status();
  std::optional<DType> d = ParseDType(*name);
  if (!d) return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", *name, "'"));
  return *d;
}

std::vector<int64_t> ToInt64(const std::vector<int>& v) { return {v.begin(), v.end()}; }
std::vector<int> ToInt(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

const char* kReduceNames[] = {"sum", "prod", "max", "min", "all", "any"};

// A scalar program as text: "inputs|constants|instructions|outputs", where a constant is
// "dtype:hexbytes" and an instruction "op/cast_to/dtype/args".
std::string EncodeProgram(const ScalarProgram& p) {
  std::vector<std::string> inputs, constants, instrs;
  for (DType d : p.input_dtypes) inputs.push_back(DTypeName(d));
  for (const Tensor& c : p.constants) {
    const Tensor t = c.Contiguous();
    constants.push_back(absl::StrCat(
        DTypeName(t.dtype()), ":",
        absl::BytesToHexString(std::string(static_cast<const char*>(t.raw_data()), t.nbytes()))));
  }
  for (const ScalarProgram::Instr& i : p.instrs) {
    instrs.push_back(absl::StrCat(ScalarOpName(i.op.kind), "/", DTypeName(i.op.cast_to), "/",
                                  DTypeName(i.dtype), "/", absl::StrJoin(i.args, ",")));
  }
  return absl::StrCat(absl::StrJoin(inputs, ","), "|", absl::StrJoin(constants, ","), "|",
                      absl::StrJoin(instrs, ";"), "|", absl::StrJoin(p.outputs, ","));
}

absl::StatusOr<std::vector<int>> IntList(absl::string_view text) {
  std::vector<int> out;
  if (text.empty()) return out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(part, &v)) return absl::InvalidArgumentError("bad register list");
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const ScalarProgram>> DecodeProgram(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, '|');
  auto bad = [](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("bad composite program: ", why));
  };
  if (parts.size() != 4) return bad("expected 4 sections");
  auto p = std::make_shared<ScalarProgram>();
  if (!parts[0].empty()) {
    for (absl::string_view name : absl::StrSplit(parts[0], ',')) {
      std::optional<DType> d = ParseDType(std::string(name));
      if (!d) return bad(absl::StrCat("dtype '", name, "'"));
      p->input_dtypes.push_back(*d);
    }
  }
  if (!parts[1].empty()) {
    for (absl::string_view c : absl::StrSplit(parts[1], ',')) {
      const std::vector<std::string> kv = absl::StrSplit(c, ':');
      std::optional<DType> d = kv.size() == 2 ? ParseDType(kv[0]) : std::nullopt;
      if (!d) return bad("constant");
      const std::string bytes = absl::HexStringToBytes(kv[1]);
      if (static_cast<int64_t>(bytes.size()) != DTypeSize(*d)) return bad("constant size");
      Tensor t = Tensor::Empty(*d, {});
      std::memcpy(t.raw_data(), bytes.data(), bytes.size());
      p->constants.push_back(t);
    }
  }
  const int first_instr = p->num_inputs() + static_cast<int>(p->constants.size());
  if (!parts[2].empty()) {
    for (absl::string_view instr : absl::StrSplit(parts[2], ';')) {
      const std::vector<std::string> f = absl::StrSplit(instr, '/');
      if (f.size() != 4) return bad("instruction");
      std::optional<ScalarOpKind> k = ParseScalarOpKind(f[0]);
      std::optional<DType> cast_to = ParseDType(f[1]), dtype = ParseDType(f[2]);
      if (!k || !cast_to || !dtype || *k == ScalarOpKind::kComposite) {
        return bad(absl::StrCat("instruction '", instr, "'"));
      }
      absl::StatusOr<std::vector<int>> args = IntList(f[3]);
      if (!args.ok()) return args.status();
      const int arity = ScalarOpArity(*k);
      if (arity >= 0 ? static_cast<int>(args->size()) != arity : args->size() < 2) {
        return bad(absl::StrCat("instruction '", instr, "' has ", args->size(), " arguments"));
      }
      const int self = first_instr + static_cast<int>(p->instrs.size());
      for (int a : *args) {
        if (a < 0 || a >= self) return bad("an argument register out of range");
      }
      p->instrs.push_back({ScalarOp(*k, *cast_to), *args, *dtype});
    }
  }
  absl::StatusOr<std::vector<int>> outputs = IntList(parts[3]);
  if (!outputs.ok()) return outputs.status();
  const int n_regs = first_instr + static_cast<int>(p->instrs.size());
  for (int o : *outputs) {
    if (o < 0 || o >= n_regs) return bad("an output register out of range");
  }
  if (outputs->empty()) return bad("no outputs");
  p->outputs = *outputs;
  return std::shared_ptr<const ScalarProgram>(std::move(p));
}

}  // namespace

// --- Attrs of each family ---------------------------------------------------------------------

OpAttrs Elemwise::Attrs() const {
  OpAttrs a{{"scalar_op", ScalarOpName(scalar_op_.kind)}};
  if (scalar_op_.kind == ScalarOpKind::kCast) a.Set("cast_to", DTypeName(scalar_op_.cast_to));
  if (scalar_op_.kind == ScalarOpKind::kComposite) {
    a.Set("program", EncodeProgram(*scalar_op_.program));
  }
  std::vector<int64_t> pattern;
  for (const auto& [o, i] : inplace_pattern_) {
    pattern.push_back(o);
    pattern.push_back(i);
  }
  if (!pattern.empty()) a.Set("inplace_pattern", pattern);
  return a;
}

OpAttrs DimShuffle::Attrs() const {
  std::vector<int64_t> broadcastable(input_broadcastable_.begin(), input_broadcastable_.end());
  return {{"input_broadcastable", broadcastable},
          {"new_order", ToInt64(new_order_)},
          {"inplace", int64_t{inplace_}}};
}

OpAttrs ShapeOp::Attrs() const { return {}; }
OpAttrs ShapeI::Attrs() const { return {{"i", int64_t{i_}}}; }
OpAttrs Reshape::Attrs() const { return {{"ndim", int64_t{ndim_}}}; }
OpAttrs SpecifyShape::Attrs() const { return {}; }
OpAttrs MakeVector::Attrs() const { return {{"dtype", DTypeName(dtype_)}}; }

OpAttrs CAReduce::Attrs() const {
  OpAttrs a{{"reduce", kReduceNames[static_cast<int>(reduce_)]}};
  if (axis_) a.Set("axis", ToInt64(*axis_));
  if (dtype_) a.Set("dtype", DTypeName(*dtype_));
  if (acc_dtype_) a.Set("acc_dtype", DTypeName(*acc_dtype_));
  return a;
}

OpAttrs MaxAndArgmax::Attrs() const { return {{"axis", ToInt64(axis_)}}; }

OpAttrs CumOp::Attrs() const {
  OpAttrs a{{"mode", product_ ? "mul" : "add"}};
  if (axis_) a.Set("axis", int64_t{*axis_});
  return a;
}

OpAttrs ProductOp::Attrs() const { return {{"inplace", int64_t{inplace_}}}; }

OpAttrs BuildOp::Attrs() const {
  return {{"dtype", DTypeName(dtype_)}, {"n_splits", int64_t{n_splits_}}};
}

OpAttrs SubtensorOp::Attrs() const {
  // Each entry: bit 0 a slice, bits 1-3 whether it has a start, stop and step.
  std::vector<int64_t> idx;
  for (const IndexEntry& e : idx_) {
    idx.push_back(e.is_slice | e.has_start << 1 | e.has_stop << 2 | e.has_step << 3);
  }
  return {{"idx_list", idx}, {"set", int64_t{set_}}, {"inplace", int64_t{inplace_}}};
}

OpAttrs AxisOp::Attrs() const {
  OpAttrs a;
  if (axis_) a.Set("axis", int64_t{*axis_});
  return a;
}

OpAttrs GradientOp::Attrs() const {
  return {{"mode", int64_t{static_cast<int>(mode_)}}, {"a", a_}, {"b", b_}};
}

// --- MakeOp --------------------------------------------------------------------------------------

std::optional<OpKind> ParseOpKind(const std::string& name) {
#define KILN_PARSE_OP_KIND(e, aesara_name) \
  if (name == aesara_name) return OpKind::e;
  KILN_OP_KINDS(KILN_PARSE_OP_KIND)
#undef KILN_PARSE_OP_KIND
  return std::nullopt;
}

absl::StatusOr<OpPtr> MakeOp(OpKind kind, const OpAttrs& a) {
  auto flag = [&](const std::string& key) -> absl::StatusOr<bool> {
    if (!a.Has(key)) return false;
    absl::StatusOr<int64_t> v = a.Int(key);
    if (!v.ok()) return v.status();
    return *v != 0;
  };
  auto optional_int = [&](const std::string& key) -> absl::StatusOr<std::optional<int>> {
    if (!a.Has(key)) return std::optional<int>();
    absl::StatusOr<int64_t> v = a.Int(key);
    if (!v.ok()) return v.status();
    return std::optional<int>(static_cast<int>(*v));
  };
  auto wrap = [&](absl::Status s) { return Bad(kind, std::string(s.message())); };
  switch (kind) {
    case OpKind::kElemwise: {
      absl::StatusOr<std::string> name = a.String("scalar_op");
      if (!name.ok()) return wrap(name.status());
      std::optional<ScalarOpKind> k = ParseScalarOpKind(*name);
      if (!k) return Bad(kind, absl::StrCat("unknown scalar op '", *name, "'"));
      ScalarOp op(*k);
      if (*k == ScalarOpKind::kCast) {
        absl::StatusOr<DType> to = DTypeAttr(a, "cast_to");
        if (!to.ok()) return wrap(to.status());
        op.cast_to = *to;
      }
      if (*k == ScalarOpKind::kComposite) {
        absl::StatusOr<std::string> text = a.String("program");
        if (!text.ok()) return wrap(text.status());
        absl::StatusOr<std::shared_ptr<const ScalarProgram>> p = DecodeProgram(*text);
        if (!p.ok()) return wrap(p.status());
        op.program = *p;
      }
      Elemwise::InplacePattern pattern;
      if (a.Has("inplace_pattern")) {
        absl::StatusOr<std::vector<int64_t>> flat = a.Ints("inplace_pattern");
        if (!flat.ok() || flat->size() % 2 != 0) return Bad(kind, "bad inplace_pattern");
        for (size_t i = 0; i < flat->size(); i += 2) {
          pattern.push_back({static_cast<int>((*flat)[i]), static_cast<int>((*flat)[i + 1])});
        }
      }
      return Elemwise::Make(op, pattern);
    }
    case OpKind::kDimShuffle: {
      absl::StatusOr<std::vector<int64_t>> b = a.Ints("input_broadcastable");
      absl::StatusOr<std::vector<int64_t>> order = a.Ints("new_order");
      absl::StatusOr<bool> inplace = flag("inplace");
      if (!b.ok()) return wrap(b.status());
      if (!order.ok()) return wrap(order.status());
      if (!inplace.ok()) return wrap(inplace.status());
      return DimShuffle::Make(std::vector<bool>(b->begin(), b->end()), ToInt(*order), *inplace);
    }
    case OpKind::kShape:
      return OpPtr(std::make_shared<ShapeOp>());
    case OpKind::kShapeI:
    case OpKind::kReshape: {
      absl::StatusOr<int64_t> v = a.Int(kind == OpKind::kShapeI ? "i" : "ndim");
      if (!v.ok()) return wrap(v.status());
      if (*v < 0 || *v > 64) return Bad(kind, "dimension out of range");
      if (kind == OpKind::kShapeI) return OpPtr(std::make_shared<ShapeI>(static_cast<int>(*v)));
      return OpPtr(std::make_shared<Reshape>(static_cast<int>(*v)));
    }
    case OpKind::kSpecifyShape:
      return OpPtr(std::make_shared<SpecifyShape>());
    case OpKind::kMakeVector: {
      absl::StatusOr<DType> d = DTypeAttr(a, "dtype");
      if (!d.ok()) return wrap(d.status());
      return OpPtr(std::make_shared<MakeVector>(*d));
    }
    case OpKind::kCAReduce: {
      absl::StatusOr<std::string> r = a.String("reduce");
      if (!r.ok()) return wrap(r.status());
      int reduce = -1;
      for (int i = 0; i < 6; ++i) {
        if (*r == kReduceNames[i]) reduce = i;
      }
      if (reduce < 0) return Bad(kind, absl::StrCat("unknown reduction '", *r, "'"));
      std::optional<std::vector<int>> axis;
      if (a.Has("axis")) {
        absl::StatusOr<std::vector<int64_t>> v = a.Ints("axis");
        if (!v.ok()) return wrap(v.status());
        axis = ToInt(*v);
      }
      std::optional<DType> dtype, acc;
      if (a.Has("dtype")) {
        absl::StatusOr<DType> d = DTypeAttr(a, "dtype");
        if (!d.ok()) return wrap(d.status());
        dtype = *d;
      }
      if (a.Has("acc_dtype")) {
        absl::StatusOr<DType> d = DTypeAttr(a, "acc_dtype");
        if (!d.ok()) return wrap(d.status());
        acc = *d;
      }
      return OpPtr(std::make_shared<CAReduce>(static_cast<ReduceKind>(reduce), axis, dtype, acc));
    }
    case OpKind::kMaxAndArgmax:
    case OpKind::kArgmax: {
      absl::StatusOr<std::vector<int64_t>> axis = a.Ints("axis");
      if (!axis.ok()) return wrap(axis.status());
      return OpPtr(std::make_shared<MaxAndArgmax>(ToInt(*axis), kind == OpKind::kArgmax));
    }
    case OpKind::kCumOp: {
      absl::StatusOr<std::string> mode = a.String("mode");
      absl::StatusOr<std::optional<int>> axis = optional_int("axis");
      if (!mode.ok() || (*mode != "add" && *mode != "mul"))
        return Bad(kind, "mode must be add or mul");
      if (!axis.ok()) return wrap(axis.status());
      return OpPtr(std::make_shared<CumOp>(*axis, *mode == "mul"));
    }
    case OpKind::kDot:
    case OpKind::kMatMul:
    case OpKind::kDot22:
    case OpKind::kGemm:
    case OpKind::kGemv: {
      absl::StatusOr<bool> inplace = flag("inplace");
      if (!inplace.ok()) return wrap(inplace.status());
      return OpPtr(std::make_shared<ProductOp>(kind, *inplace));
    }
    case OpKind::kAlloc:
    case OpKind::kARange:
    case OpKind::kEye:
    case OpKind::kJoin:
    case OpKind::kSplit: {
      absl::StatusOr<DType> d = a.Has("dtype") ? DTypeAttr(a, "dtype") : DType::kFloat64;
      absl::StatusOr<std::optional<int>> n = optional_int("n_splits");
      if (!d.ok()) return wrap(d.status());
      if (!n.ok()) return wrap(n.status());
      if (n->value_or(0) < 0 || n->value_or(0) > 1000000) return Bad(kind, "n_splits out of range");
      return OpPtr(std::make_shared<BuildOp>(kind, *d, n->value_or(0)));
    }
    case OpKind::kSubtensor:
    case OpKind::kIncSubtensor:
    case OpKind::kAdvancedSubtensor1:
    case OpKind::kAdvancedIncSubtensor1: {
      std::vector<IndexEntry> idx;
      if (a.Has("idx_list")) {
        absl::StatusOr<std::vector<int64_t>> bits = a.Ints("idx_list");
        if (!bits.ok()) return wrap(bits.status());
        for (int64_t b : *bits) {
          if (b < 0 || b > 15 || (!(b & 1) && b != 0)) return Bad(kind, "bad idx_list entry");
          idx.push_back({(b & 1) != 0, (b & 2) != 0, (b & 4) != 0, (b & 8) != 0});
        }
      }
      absl::StatusOr<bool> set = flag("set"), inplace = flag("inplace");
      if (!set.ok()) return wrap(set.status());
      if (!inplace.ok()) return wrap(inplace.status());
      return OpPtr(std::make_shared<SubtensorOp>(kind, idx, *set, *inplace));
    }
    case OpKind::kSoftmax:
    case OpKind::kLogSoftmax:
    case OpKind::kSort:
    case OpKind::kArgSort: {
      absl::StatusOr<std::optional<int>> axis = optional_int("axis");
      if (!axis.ok()) return wrap(axis.status());
      return OpPtr(std::make_shared<AxisOp>(kind, *axis));
    }
    case OpKind::kGradientOp: {
      absl::StatusOr<int64_t> mode = a.Int("mode");
      absl::StatusOr<double> x = a.Double("a"), y = a.Double("b");
      if (!mode.ok() || *mode < 0 || *mode > 5) return Bad(kind, "bad mode");
      if (!x.ok()) return wrap(x.status());
      if (!y.ok()) return wrap(y.status());
      return OpPtr(std::make_shared<GradientOp>(static_cast<GradientOp::Mode>(*mode), *x, *y));
    }
  }
  return Bad(kind, "unknown op kind");
}

}  // namespace kiln

#include "core/ops/composite.h"

#include <cstring>
#include <unordered_map>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "core/ops/composite_kernel.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"

namespace kiln {
namespace {

// A DimShuffle that only inserts or drops broadcastable dims: the identity on scalars.
bool IsBroadcastOnly(const DimShuffle& ds) {
  int last = -1;
  for (int d : ds.new_order()) {
    if (d == kX) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
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

}  // namespace

DType ScalarProgram::RegisterDType(int r) const {
  const int n_in = num_inputs(), n_const = static_cast<int>(constants.size());
  if (r < n_in) return input_dtypes[r];
  if (r < n_in + n_const) return constants[r - n_in].dtype();
  return instrs[r - n_in - n_const].dtype;
}

std::string ScalarProgram::ToString() const {
  std::vector<std::string> text;
  for (int i = 0; i < num_inputs(); ++i) text.push_back(absl::StrCat("i", i));
  for (const Tensor& c : constants) text.push_back(c.ToString());
  // Results read more than once are written inline, as Aesara does, unless long: those are
  // named t<register> and defined first, so that the text of a deep, shared expression grows
  // linearly with the program rather than exponentially.
  constexpr size_t kMaxInlineShared = 64;
  std::vector<int> uses(text.size() + instrs.size(), 0);
  for (const Instr& instr : instrs) {
    for (int r : instr.args) ++uses[r];
  }
  for (int r : outputs) ++uses[r];
  std::vector<std::string> definitions;
  for (const Instr& instr : instrs) {
    std::vector<std::string> args;
    for (int r : instr.args) args.push_back(text[r]);
    const ScalarOpKind k = instr.op.kind;
    if (const char* symbol = ScalarOpSymbol(k); symbol != nullptr && args.size() >= 2) {
      text.push_back(absl::StrCat("(", absl::StrJoin(args, absl::StrCat(" ", symbol, " ")), ")"));
    } else if (symbol != nullptr) {
      text.push_back(absl::StrCat("(", symbol, args[0], ")"));
    } else {
      text.push_back(absl::StrCat(instr.op.Name(), "(", absl::StrJoin(args, ", "), ")"));
    }
    const int r = static_cast<int>(text.size()) - 1;
    if (uses[r] > 1 && text[r].size() > kMaxInlineShared) {
      definitions.push_back(absl::StrCat("t", r, "=", text[r]));
      text[r] = absl::StrCat("t", r);
    }
  }
  std::vector<std::string> outs;
  for (int r : outputs) outs.push_back(text[r]);
  if (definitions.empty()) return absl::StrJoin(outs, ", ");
  return absl::StrCat(absl::StrJoin(definitions, ", "), "; ", absl::StrJoin(outs, ", "));
}

bool ScalarProgram::operator==(const ScalarProgram& other) const {
  if (input_dtypes != other.input_dtypes || outputs != other.outputs ||
      constants.size() != other.constants.size() || instrs.size() != other.instrs.size()) {
    return false;
  }
  for (size_t i = 0; i < constants.size(); ++i) {
    if (!constants[i].BitwiseEquals(other.constants[i])) return false;
  }
  for (size_t i = 0; i < instrs.size(); ++i) {
    if (!(instrs[i].op == other.instrs[i].op) || instrs[i].args != other.instrs[i].args ||
        instrs[i].dtype != other.instrs[i].dtype) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::shared_ptr<const ScalarProgram>> ScalarProgram::FromGraph(
    const std::vector<Var>& inputs, const std::vector<Var>& outputs) {
  std::vector<VariablePtr> ins, outs;
  for (const Var& v : inputs) {
    if (!v.ok()) return v.status();
    ins.push_back(v.ptr());
  }
  for (const Var& v : outputs) {
    if (!v.ok()) return v.status();
    outs.push_back(v.ptr());
  }
  auto program = std::make_shared<ScalarProgram>();
  std::unordered_map<const Variable*, int> reg;
  for (const VariablePtr& v : ins) {
    if (v->tensor_type() == nullptr)
      return absl::InvalidArgumentError("composite: a non-tensor input");
    reg[v.get()] = program->num_inputs();
    program->input_dtypes.push_back(v->tensor_type()->dtype());
  }
  // Constants first (their registers follow the inputs), then the instructions.
  const std::vector<Apply*> order = IoToposort(ins, outs);
  std::vector<const Constant*> constants;
  for (Variable* leaf : GraphInputs(outs, ins)) {
    if (reg.contains(leaf)) continue;
    if (!leaf->is_constant()) {
      return absl::InvalidArgumentError(
          absl::StrCat("composite: ", leaf->ToString(), " is needed but is not among the inputs"));
    }
    const Tensor& data = static_cast<const Constant*>(leaf)->data();
    if (data.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("composite: the constant ", leaf->ToString(), " is not a scalar"));
    }
    reg[leaf] = program->num_inputs() + static_cast<int>(program->constants.size());
    program->constants.push_back(data.View({}, {}).Contiguous());
  }
  // The constants inside nested composites get registers among the constants too.
  std::unordered_map<const Apply*, std::vector<int>> inner_constants;
  for (Apply* node : order) {
    const auto* ew = node->op().As<Elemwise>();
    if (ew == nullptr || ew->scalar_op().kind != ScalarOpKind::kComposite) continue;
    for (const Tensor& c : ew->scalar_op().program->constants) {
      inner_constants[node].push_back(program->num_inputs() +
                                      static_cast<int>(program->constants.size()));
      program->constants.push_back(c);
    }
  }
  const int base = program->num_inputs() + static_cast<int>(program->constants.size());
  auto emit = [&](const ScalarOp& op, std::vector<int> args, DType dtype) {
    program->instrs.push_back({op, std::move(args), dtype});
    return base + static_cast<int>(program->instrs.size()) - 1;
  };
  for (Apply* node : order) {
    const auto* ds = node->op().As<DimShuffle>();
    if (ds != nullptr && IsBroadcastOnly(*ds)) {
      reg[node->output_ptr(0)] = reg.at(node->inputs()[0].get());
      continue;
    }
    const auto* ew = node->op().As<Elemwise>();
    if (ew == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("composite: ", node->ToString(), " is not an elementwise operation"));
    }
    std::vector<int> args;
    for (const VariablePtr& in : node->inputs()) args.push_back(reg.at(in.get()));
    if (ew->scalar_op().kind != ScalarOpKind::kComposite) {
      reg[node->output_ptr(0)] =
          emit(ew->scalar_op(), args, node->output_ptr(0)->tensor_type()->dtype());
      continue;
    }
    // Inline a nested composite: its registers map to this program's.
    const ScalarProgram& inner = *ew->scalar_op().program;
    std::vector<int> map = args;
    map.insert(map.end(), inner_constants[node].begin(), inner_constants[node].end());
    for (const Instr& instr : inner.instrs) {
      std::vector<int> mapped;
      for (int r : instr.args) mapped.push_back(map[r]);
      map.push_back(emit(instr.op, mapped, instr.dtype));
    }
    for (int k = 0; k < node->num_outputs(); ++k) reg[node->output_ptr(k)] = map[inner.outputs[k]];
  }
  for (const VariablePtr& v : outs) program->outputs.push_back(reg.at(v.get()));
  program->plan = PlanFusedBlocks(*program);
  return std::shared_ptr<const ScalarProgram>(std::move(program));
}

std::vector<Var> apply_composite(std::shared_ptr<const ScalarProgram> program,
                                 const std::vector<Var>& inputs) {
  const size_t n = program ? program->outputs.size() : 1;
  std::vector<VariablePtr> vars;
  for (const Var& v : inputs) {
    if (!v.ok()) return std::vector<Var>(n, v);
    vars.push_back(v.ptr());
  }
  OpPtr op =
      Elemwise::Make(ScalarOp(ScalarOpKind::kComposite, DType::kFloat64, std::move(program)));
  absl::StatusOr<ApplyPtr> node = op->MakeNode(std::move(vars));
  if (!node.ok()) return std::vector<Var>(n, Var(node.status()));
  std::vector<Var> out;
  for (int i = 0; i < (*node)->num_outputs(); ++i) out.push_back(Var((*node)->output(i)));
  return out;
}

std::string EncodeScalarProgram(const ScalarProgram& p) {
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

absl::StatusOr<std::shared_ptr<const ScalarProgram>> DecodeScalarProgram(const std::string& text) {
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
      absl::StatusOr<Tensor> t = Tensor::FromBytes(*d, {}, absl::HexStringToBytes(kv[1]));
      if (!t.ok()) return bad(absl::StrCat("constant: ", t.status().message()));
      p->constants.push_back(*std::move(t));
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
      ASSIGN_OR_RETURN(std::vector<int> args, IntList(f[3]));
      const int arity = ScalarOpArity(*k);
      if (arity >= 0 ? static_cast<int>(args.size()) != arity : args.size() < 2) {
        return bad(absl::StrCat("instruction '", instr, "' has ", args.size(), " arguments"));
      }
      const int self = first_instr + static_cast<int>(p->instrs.size());
      for (int a : args) {
        if (a < 0 || a >= self) return bad("an argument register out of range");
      }
      p->instrs.push_back({ScalarOp(*k, *cast_to), args, *dtype});
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
  p->plan = PlanFusedBlocks(*p);
  return std::shared_ptr<const ScalarProgram>(std::move(p));
}

}  // namespace kiln

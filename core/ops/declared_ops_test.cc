// Every registered op against its declaration: made from the wire it equals itself after a round
// trip, fields absent from the wire take their defaults, unknown or out-of-range attributes are
// refused with the op's name; and the split families (products, building ops, indexing) print
// as Aesara does and are told apart by class.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/graph/op_registry.h"
#include "core/kiln.h"

namespace kiln {
namespace {

TEST(DeclaredOpsTest, EveryRegisteredOpRoundTripsThroughItsWireAttributes) {
  std::vector<std::string> need_attributes;
  for (const std::string& name : RegisteredOps()) {
    absl::StatusOr<OpPtr> op = MakeOp(name, {});
    if (!op.ok()) {  // an op with a required attribute says which
      EXPECT_EQ(op.status().code(), absl::StatusCode::kInvalidArgument) << name;
      EXPECT_NE(op.status().message().find(name), std::string::npos) << op.status();
      need_attributes.push_back(name);
      continue;
    }
    EXPECT_EQ((*op)->type_name(), name);
    absl::StatusOr<OpPtr> again = MakeOp(name, (*op)->Attrs());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(**again == **op) << name;
    EXPECT_EQ((*again)->Key(), (*op)->Key());
    EXPECT_EQ(MakeOp(name, {{"no_such_attribute", int64_t{1}}}).status().message(),
              name + ": unknown attribute 'no_such_attribute'");
  }
  // Only the ops whose attributes have no sensible default (the core op, the scalar op, the new
  // order, the reduction, the composed graph, the distribution, the loop body).
  EXPECT_EQ(need_attributes,
            (std::vector<std::string>{"Blockwise", "CAReduce", "DimShuffle", "Elemwise", "OpFromGraph",
                                      "RandomVariable", "Scan"}));
}

// Each op's field list (what Python generates its class from) names every attribute the op
// writes, in wire order, and the default of each field is what an op built without it writes.
TEST(DeclaredOpsTest, EveryRegisteredOpListsItsFields) {
  for (const std::string& name : RegisteredOps()) {
    absl::StatusOr<std::vector<OpField>> fields = FieldsOfOp(name);
    ASSERT_TRUE(fields.ok()) << fields.status();
    std::vector<std::string> names;
    for (const OpField& f : *fields) names.push_back(f.name);
    absl::StatusOr<OpPtr> op = MakeOp(name, {});
    if (!op.ok()) continue;
    size_t next = 0;  // the written attributes appear in field order
    const OpAttrs written = (*op)->Attrs();
    for (const auto& [key, value] : written.values()) {
      while (next < names.size() && names[next] != key) ++next;
      ASSERT_LT(next, names.size()) << name << " writes '" << key << "', not in field order";
      EXPECT_EQ((*fields)[next].default_value, value) << name << "." << key;
    }
  }
  const std::vector<OpField> repeat = *FieldsOfOp("Repeat");
  ASSERT_EQ(repeat.size(), 1u);
  EXPECT_EQ(repeat[0].name, "axis");
  EXPECT_EQ(repeat[0].default_value, std::nullopt);  // an unset optional: no axis, flattened
  EXPECT_EQ((*FieldsOfOp("Elemwise"))[0].name, "scalar_op");
  EXPECT_EQ(FieldsOfOp("NoSuchOp").status().message(), "unknown op 'NoSuchOp'");
}

// An op's class is its one identity: ops of one class share its id, ops of two classes never do,
// and As<T>/Is<T> tell them apart without comparing names.
TEST(DeclaredOpsTest, EachRegisteredClassHasItsOwnId) {
  std::map<OpClassId, std::string> class_of;
  for (const std::string& name : RegisteredOps()) {
    absl::StatusOr<OpPtr> op = MakeOp(name, {});
    if (!op.ok()) continue;
    const auto [it, added] = class_of.emplace((*op)->class_id(), name);
    EXPECT_TRUE(added) << name << " shares its class id with " << it->second;
    EXPECT_EQ((*MakeOp(name, (*op)->Attrs()))->class_id(), (*op)->class_id()) << name;
  }
  EXPECT_GT(class_of.size(), 30u);
  const OpPtr softmax = *MakeOp("Softmax", {});
  EXPECT_TRUE(softmax->Is<Softmax>());
  EXPECT_EQ(softmax->As<Softmax>(), softmax.get());
  EXPECT_EQ(softmax->As<LogSoftmax>(), nullptr);
  EXPECT_EQ(softmax->class_id(), OpClassIdOf<Softmax>());
  EXPECT_NE(OpClassIdOf<Softmax>(), OpClassIdOf<LogSoftmax>());
}

TEST(DeclaredOpsTest, RelatedOpsAreSeparateClassesPrintedAsAesara) {
  const Var m = dmatrix("m"), v = dvector("v"), s = dscalar("s");
  const Var z = dmatrix("z");
  struct Case {
    Var out;
    const char* type_name;
    const char* name;
  };
  const std::vector<Case> cases = {
      {dot(m, v), "Dot", "dot"},
      {matmul(m, m), "MatMul", "MatMul"},
      {dot22(m, m), "Dot22", "Dot22"},
      {gemm(z, s, m, m, s), "Gemm", "Gemm{no_inplace}"},
      {gemv(v, s, m, v, s), "Gemv", "Gemv{no_inplace}"},
      {zeros({constant(2), constant(3)}), "Alloc", "Alloc"},
      {arange(constant(5)), "ARange", "ARange{dtype='int64'}"},
      {eye(3), "Eye", "Eye{dtype='float64'}"},
      {concatenate({m, m}), "Join", "Join"},
      {split(v, {1, 2}, 0)[0], "Split", "Split{2}"},
      {subtensor(m, {0, Slice{1, std::nullopt, std::nullopt}}), "Subtensor",
       "Subtensor{int64, int64::}"},
      {set_subtensor(subtensor(m, {0}), v), "IncSubtensor", "IncSubtensor{Set;int64}"},
      {take(m, lvector("i")), "AdvancedSubtensor1", "AdvancedSubtensor1"},
      {inc_subtensor(take(m, lvector("i")), v), "AdvancedIncSubtensor1",
       "AdvancedIncSubtensor1{no_inplace,inc}"},
  };
  std::vector<const Op*> ops;
  for (const Case& c : cases) {
    ASSERT_TRUE(c.out.ok()) << c.name << ": " << c.out.status();
    const Op& op = c.out->owner()->op();
    EXPECT_EQ(op.type_name(), c.type_name);
    EXPECT_EQ(op.Name(), c.name);
    absl::StatusOr<OpPtr> again = MakeOp(c.type_name, op.Attrs());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(**again == op) << c.name;
    for (const Op* other : ops) EXPECT_FALSE(*other == op) << other->Name() << " vs " << c.name;
    ops.push_back(&op);
  }
}

TEST(DeclaredOpsTest, AbsentFieldsTakeTheirDefaults) {
  absl::StatusOr<OpPtr> plain = MakeOp("Gemm", {});
  absl::StatusOr<OpPtr> explicit_plain = MakeOp("Gemm", {{"inplace", int64_t{0}}});
  absl::StatusOr<OpPtr> inplace = MakeOp("Gemm", {{"inplace", int64_t{1}}});
  ASSERT_TRUE(plain.ok() && explicit_plain.ok() && inplace.ok());
  EXPECT_TRUE(**plain == **explicit_plain);
  EXPECT_EQ((*plain)->Name(), "Gemm{no_inplace}");
  EXPECT_TRUE((*plain)->destroy_map().empty());
  EXPECT_EQ((*inplace)->Name(), "Gemm{inplace}");
  EXPECT_EQ((*inplace)->destroy_map(), (std::vector<std::pair<int, int>>{{0, 0}}));
  absl::StatusOr<OpPtr> set =
      MakeOp("IncSubtensor", {{"idx_list", std::vector<int64_t>{0, 9}}, {"set", int64_t{1}}});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ((*set)->Name(), "IncSubtensor{Set;int64, ::int64}");
}

TEST(DeclaredOpsTest, BadAttributesAreRefusedWithTheOpsName) {
  EXPECT_EQ(MakeOp("Alloc", {{"dtype", std::string("float64")}}).status().message(),
            "Alloc: unknown attribute 'dtype'");
  EXPECT_EQ(MakeOp("Gemm", {{"inplace", std::string("yes")}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeOp("Split", {{"n_splits", int64_t{-1}}}).status().message(),
            "Split: n_splits -1 is out of range [0, 65536]");
  EXPECT_EQ(MakeOp("Eye", {{"dtype", std::string("float128")}}).status().message(),
            "Eye: unknown dtype 'float128'");
  EXPECT_EQ(MakeOp("Subtensor", {{"idx_list", std::vector<int64_t>{2}}}).status().message(),
            "Subtensor: attribute 'idx_list' has the bad entry 2");
  EXPECT_EQ(MakeOp("Subtensor", {{"idx_list", std::vector<int64_t>(65, 0)}}).status().message(),
            "Subtensor: attribute 'idx_list' has 65 entries, more than 64 dims");
}

// Join's axis may be symbolic: shapes fall back to the output's dims and the gradient says it
// is not implemented, instead of reading the axis as a constant.
TEST(DeclaredOpsTest, JoinWithASymbolicAxis) {
  const Var m = dmatrix("m"), axis = lscalar("axis");
  absl::StatusOr<OpPtr> join = MakeOp("Join", {});
  ASSERT_TRUE(join.ok());
  const Var out = ApplyOp(*join, {axis, m, m});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->type()->ToString(), "TensorType(float64, (?, ?))");
  absl::StatusOr<std::vector<ShapeVars>> shapes =
      out->owner()->op().InferShape(*out->owner(), {{}, ShapeOf(m.ptr()), ShapeOf(m.ptr())});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  ASSERT_EQ((*shapes)[0].size(), 2u);
  for (int d = 0; d < 2; ++d) {  // each dim read from the output itself
    const VariablePtr& dim = (*shapes)[0][d];
    ASSERT_NE(dim->owner(), nullptr);
    EXPECT_EQ(dim->owner()->op().Name(), absl::StrCat("Shape_i{", d, "}"));
    EXPECT_EQ(dim->owner()->inputs()[0], out.ptr());
  }
  const Var g = grad(sum(out), m);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("The axis is not a constant."), std::string::npos)
      << g.status();
}

}  // namespace
}  // namespace kiln

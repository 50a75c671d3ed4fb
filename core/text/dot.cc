#include "core/text/dot.h"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/graph/op.h"
#include "core/graph/traversal.h"
#include "core/ops/elemwise.h"

extern char** environ;

namespace kiln {
namespace {

// Longest label pydotprint draws before cutting it with "...".
constexpr size_t kMaxLabelSize = 70;

std::string Quote(const std::string& s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

std::string Cut(std::string s) {
  if (s.size() > kMaxLabelSize) s = s.substr(0, kMaxLabelSize - 3) + "...";
  return s;
}

// pydotprint's variable label: "name=x TensorType(...)", "val=2.0 TensorType(...)" or the type.
std::string VariableLabel(const Variable& v, const DotOptions& options) {
  if (!v.name().empty()) {
    return Cut(options.var_with_name_simple
                   ? v.name()
                   : absl::StrCat("name=", v.name(), " ", v.type()->ToString()));
  }
  if (v.is_constant()) {
    std::string value = static_cast<const Constant&>(v).data().ToString();
    value = value.substr(0, value.find('\n'));
    return Cut(absl::StrCat("val=", value, " ", v.type()->ToString()));
  }
  return Cut(v.type()->ToString());
}

bool HasPair(const std::vector<std::pair<int, int>>& pairs, int input) {
  return std::any_of(pairs.begin(), pairs.end(), [&](auto& p) { return p.second == input; });
}

}  // namespace

std::string ToDot(const std::vector<Var>& outputs, const DotOptions& options) {
  std::vector<VariablePtr> outs;
  for (const Var& v : outputs) {
    if (v.ok()) outs.push_back(v.ptr());
  }
  std::unordered_set<const Variable*> is_output;
  for (const VariablePtr& v : outs) is_output.insert(v.get());
  const std::vector<Apply*> order = IoToposort({}, outs);

  std::string dot = "digraph G {\n";
  std::unordered_map<const void*, std::string> ids;
  std::unordered_set<std::string> apply_labels;
  auto id_of = [&](const void* key, const char* kind) -> const std::string& {
    auto [it, inserted] = ids.try_emplace(key, "");
    if (inserted) it->second = Quote(absl::StrCat(kind, ids.size() - 1));
    return it->second;
  };
  auto var_box = [&](const Variable* v, const std::string& fill) {
    absl::StrAppend(
        &dot, "  ", id_of(v, "var"), " [label=", Quote(VariableLabel(*v, options)), ", shape=box",
        fill.empty() ? "" : absl::StrCat(", style=filled, fillcolor=", Quote(fill)), "];\n");
  };
  // An intermediate is drawn as a box unless compact mode folds it into an edge label.
  auto drawn_as_box = [&](const Variable* v) {
    return v->owner() == nullptr || !v->name().empty() || !options.compact || is_output.contains(v);
  };

  for (size_t k = 0; k < order.size(); ++k) {
    const Apply* node = order[k];
    std::string label = absl::StrReplaceAll(node->op().Name(), {{":", "_"}});
    if (!apply_labels.insert(label).second) absl::StrAppend(&label, " id=", k);
    const std::string& aid = id_of(node, "apply");
    const bool elemwise = node->op().Is<Elemwise>();
    absl::StrAppend(&dot, "  ", aid, " [label=", Quote(Cut(label)), ", shape=ellipse",
                    elemwise ? ", style=filled, fillcolor=\"#FFAABB\"" : "", "];\n");

    const auto views = node->op().view_map();
    const auto destroys = node->op().destroy_map();
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Variable* in = node->inputs()[i].get();
      std::vector<std::string> attrs;
      std::string label_text = node->num_inputs() > 1 ? absl::StrCat(i) : "";
      std::string source;
      if (in->owner() == nullptr) {
        if (!ids.contains(in)) var_box(in, "green");
        source = id_of(in, "var");
      } else if (drawn_as_box(in)) {
        source = id_of(in, "var");
      } else {
        source = id_of(in->owner(), "apply");
        label_text =
            absl::StrCat(label_text, label_text.empty() ? "" : " ", in->type()->ToString());
      }
      if (!label_text.empty()) attrs.push_back(absl::StrCat("label=", Quote(label_text)));
      if (HasPair(views, i)) attrs.push_back("color=blue");
      if (HasPair(destroys, i)) attrs.push_back("color=red");
      absl::StrAppend(&dot, "  ", source, " -> ", aid,
                      attrs.empty() ? "" : absl::StrCat(" [", absl::StrJoin(attrs, ", "), "]"),
                      ";\n");
    }
    for (int i = 0; i < node->num_outputs(); ++i) {
      const Variable* out = node->output_ptr(i);
      if (!drawn_as_box(out)) continue;
      var_box(out, is_output.contains(out) ? "blue" : "");
      absl::StrAppend(
          &dot, "  ", aid, " -> ", id_of(out, "var"),
          node->num_outputs() > 1 ? absl::StrCat(" [label=", Quote(absl::StrCat(i)), "]") : "",
          ";\n");
    }
  }
  // Outputs that are graph inputs or constants have no node drawing them.
  for (const VariablePtr& v : outs) {
    if (v->owner() == nullptr && !ids.contains(v.get())) var_box(v.get(), "blue");
  }
  dot += "}\n";
  return dot;
}

absl::Status WriteDot(const std::vector<Var>& outputs, const std::string& path,
                      const std::string& format, const DotOptions& options) {
  const std::string dot_path = format == "dot" ? path : path + ".dot";
  {
    std::ofstream file(dot_path);
    file << ToDot(outputs, options);
    if (!file) return absl::UnavailableError(absl::StrCat("cannot write ", dot_path));
  }
  if (format == "dot") return absl::OkStatus();
  const std::string type_flag = "-T" + format;
  const std::string out_flag = "-o" + path;
  char* argv[] = {const_cast<char*>("dot"), const_cast<char*>(type_flag.c_str()),
                  const_cast<char*>(out_flag.c_str()), const_cast<char*>(dot_path.c_str()),
                  nullptr};
  pid_t pid;
  if (posix_spawnp(&pid, "dot", nullptr, nullptr, argv, environ) != 0) {
    return absl::FailedPreconditionError("graphviz's `dot` is not installed");
  }
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  std::remove(dot_path.c_str());
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::InternalError(absl::StrCat("dot ", type_flag, " failed for ", path));
  }
  return absl::OkStatus();
}

}  // namespace kiln

// General rules for how each C parameter crosses into Python. The rules read
// the type, the header's own [in]/[out] annotations and sibling functions
// (`fGetPTX` has `fGetPTXSize`); the spec overrides what they get wrong.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

namespace {

bool is_char(const Type& t) { return t.kind == TypeKind::Integer && t.canonical == "char"; }
bool is_void(const Type& t) { return t.kind == TypeKind::Void; }
bool is_value(const Type& t) {
  return t.kind == TypeKind::Integer || t.kind == TypeKind::Floating || t.kind == TypeKind::Bool ||
         t.kind == TypeKind::Enum || t.kind == TypeKind::Handle;
}
bool is_count_name(const std::string& n) {
  auto starts_upper = [&](size_t at) { return n.size() > at && std::isupper(static_cast<unsigned char>(n[at])); };
  return (n.rfind("num", 0) == 0 && starts_upper(3)) || (n[0] == 'n' && starts_upper(1)) ||
         (n.size() > 5 && (n.compare(n.size() - 5, 5, "Count") == 0 || n.compare(n.size() - 5, 5, "count") == 0)) ||
         n == "count";
}

bool has_count(const Function& f) {
  for (const auto& p : f.params)
    if (p.type.kind == TypeKind::Integer && is_count_name(p.name)) return true;
  return false;
}

// `prefixGetPTX` -> `prefixGetPTXSize`, the query returning the byte size.
std::string size_query(const Function& f, const Model& m) {
  const std::string name = f.name + "Size";
  return m.function(name) ? name : "";
}

// `prefixGetSupportedArchs` -> `prefixGetNumSupportedArchs`, the element count.
std::string count_query(const Function& f, const Model& m) {
  const auto at = f.name.find("Get");
  if (at == std::string::npos) return "";
  const std::string name = f.name.substr(0, at + 3) + "Num" + f.name.substr(at + 3);
  return m.function(name) ? name : "";
}

// The driver's headers annotate no direction but say "Returned ..." of outputs.
bool documented_as_output(const DocParam* doc) {
  static const std::regex wording(
      R"(^(Returned|Returns|Pointer to return|Location to return|Location where|Output|On success)\b.*)",
      std::regex::icase);
  return doc && (doc->direction == "out" || std::regex_match(doc->text, wording));
}

void infer_pointer(Param& p, const Function& f, const Model& m) {
  const Type& pointee = p.type.pointee();
  const DocParam* doc = f.doc.param(p.name);
  const std::string annotated = doc ? doc->direction : "";
  if (pointee.kind == TypeKind::FunctionPointer) {
    p.skip_reason = "pointer to a function pointer";
  } else if (is_char(pointee) && pointee.is_const) {
    p.role = Role::String;
  } else if (is_char(pointee)) {
    p.query_function = size_query(f, m);
    if (!p.query_function.empty()) {
      p.role = Role::Buffer;
    } else if (documented_as_output(doc)) {
      p.role = Role::OutBuffer;  // its length parameter is linked below
      p.direction = Direction::Out;
    } else {
      p.skip_reason = "char* buffer without a size query function or a length";
    }
  } else if (pointee.kind == TypeKind::Pointer && is_char(pointee.pointee())) {
    if (pointee.is_const) {
      p.role = Role::StringArray;
    } else if (pointee.pointee().is_const) {
      p.role = Role::OutString;
      p.direction = Direction::Out;
    } else {
      p.skip_reason = "char** without const";
    }
  } else if (is_void(pointee)) {
    p.role = Role::VoidPtr;
  } else if (pointee.kind == TypeKind::Pointer && is_void(pointee.pointee()) && !pointee.is_const &&
             documented_as_output(doc)) {
    p.role = Role::OutAddress;
    p.direction = Direction::Out;
  } else if (pointee.kind == TypeKind::Pointer && is_void(pointee.pointee()) && has_count(f)) {
    p.role = Role::Array;  // void* values (JIT option values): ints or buffers
  } else if (pointee.kind == TypeKind::Record) {
    const bool out = !pointee.is_const && documented_as_output(doc);
    p.role = out ? Role::RecordOut : Role::RecordIn;
    p.direction = out ? Direction::Out : Direction::In;
  } else if (pointee.is_const && is_value(pointee)) {
    p.role = Role::Array;
  } else if (is_value(pointee)) {
    if (pointee.kind == TypeKind::Handle && (annotated == "in" || annotated == "in,out" || annotated == "inout")) {
      p.role = Role::InOutHandle;
      p.direction = Direction::InOut;
    } else if (annotated == "in" || (!documented_as_output(doc) && has_count(f) && doc)) {
      p.role = Role::Array;  // given to the call with its count (`CUjit_option* options`)
    } else if (!(p.query_function = count_query(f, m)).empty()) {
      p.role = Role::OutArray;
      p.direction = Direction::Out;
    } else {
      p.role = Role::OutScalar;
      p.direction = Direction::Out;
    }
  } else {
    p.skip_reason = "no rule for " + p.type.spelling;
  }
}

void infer_one(Param& p, const Function& f, const Model& m) {
  switch (p.type.kind) {
    case TypeKind::Integer:
    case TypeKind::Floating:
    case TypeKind::Bool: p.role = Role::Scalar; break;
    case TypeKind::Enum: p.role = Role::Enum; break;
    case TypeKind::Handle: p.role = Role::Handle; break;
    case TypeKind::Record: p.role = Role::Record; break;
    case TypeKind::FunctionPointer: p.role = Role::Callback; break;
    case TypeKind::Pointer: infer_pointer(p, f, m); break;
    default: p.skip_reason = "no rule for " + p.type.spelling; break;
  }
}

// How strongly an integer counts an array: its name names the array
// (`numDependencies` and `dependencies`) > it stands next to it > nearer before.
std::string stem(std::string n) {
  for (const char* prefix : {"num", "n"})
    if (n.rfind(prefix, 0) == 0 && n.size() > std::strlen(prefix) && std::isupper(static_cast<unsigned char>(n[std::strlen(prefix)])))
      n = n.substr(std::strlen(prefix));
  for (const char* suffix : {"Count", "count"})
    if (n.size() > std::strlen(suffix) && n.compare(n.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
      n = n.substr(0, n.size() - std::strlen(suffix));
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  return n;
}

int count_affinity(const Function& f, size_t array, size_t count) {
  const std::string a = stem(f.params[array].name), c = stem(f.params[count].name);
  if (!c.empty() && c != "count" && (a.find(c) != std::string::npos || c.find(a) != std::string::npos)) return 3;
  if (count + 1 == array || array + 1 == count) return 2;
  return 1;
}

// A struct pointer counts as an array only with clear evidence: the count is
// named for it, or a bare `count` follows it (`desc, count`).
bool counts_records(const Function& f, size_t array, size_t count) {
  return count_affinity(f, array, count) == 3 || (count == array + 1 && f.params[count].name == "count");
}

// Links each array to its count. A struct pointer is an array only when a
// count clearly belongs to it; else it stays one struct.
void link_counts(Function& f) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    Param& p = f.params[i];
    const bool maybe_array = p.role == Role::RecordIn && p.type.pointee().is_const;
    if ((p.role != Role::Array && p.role != Role::StringArray && !maybe_array) || !p.count_param.empty()) continue;
    int best = 0;
    size_t chosen = 0;
    for (size_t j = 0; j < f.params.size(); ++j) {
      const Param& c = f.params[j];
      if (j == i || c.type.kind != TypeKind::Integer || !is_count_name(c.name)) continue;
      if (maybe_array && !counts_records(f, i, j)) continue;
      const int score = count_affinity(f, i, j);
      const auto distance = [&](size_t k) { return k > i ? k - i : i - k; };
      if (score > best || (score == best && distance(j) < distance(chosen))) {
        best = score;
        chosen = j;
      }
    }
    if (maybe_array) {
      if (best == 0) continue;
      p.role = Role::Array;
    }
    if (best == 0) {
      p.role = Role::Unresolved;
      p.skip_reason = "array without a count parameter";
      continue;
    }
    p.count_param = f.params[chosen].name;
    f.params[chosen].role = Role::Count;
  }
}

// A char* output is sized by an integer parameter named for a length.
void link_lengths(Function& f) {
  for (auto& p : f.params) {
    if (p.role != Role::OutBuffer || !p.count_param.empty()) continue;
    for (auto& c : f.params) {
      if (c.type.kind == TypeKind::Integer && (c.name == "len" || c.name == "length" || c.name == "size" ||
                                               c.name == "bufferSize" || c.name == "bufSize")) {
        p.count_param = c.name;
        c.role = Role::Count;
        break;
      }
    }
    if (p.count_param.empty()) {
      p.role = Role::Unresolved;
      p.skip_reason = "char* output without a length parameter";
    }
  }
}

// A callback hands back the void* that follows it.
void link_userdata(Function& f) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    Param& cb = f.params[i];
    if (cb.role != Role::Callback) continue;
    if (!cb.userdata_param.empty()) {  // named by the spec
      for (auto& p : f.params)
        if (p.name == cb.userdata_param) p.role = Role::UserData;
      continue;
    }
    for (size_t j = i + 1; j < f.params.size() && cb.userdata_param.empty(); ++j) {
      if (f.params[j].role == Role::VoidPtr) {
        cb.userdata_param = f.params[j].name;
        f.params[j].role = Role::UserData;
      }
    }
    // Else the nearest before it (`cuUserObjectCreate(obj, ptr, destroy, ...)`).
    for (size_t j = i; cb.userdata_param.empty() && j-- > 0;) {
      if (f.params[j].role == Role::VoidPtr) {
        cb.userdata_param = f.params[j].name;
        f.params[j].role = Role::UserData;
      }
    }
  }
}

void apply_override(Param& p, const spec::ParamOverride& o) {
  p.skip_reason.clear();
  if (o.direction) p.direction = *o.direction;
  if (o.role) p.role = *o.role;
  if (!o.count_param.empty()) p.count_param = o.count_param;
  if (o.count_offset) p.count_offset = *o.count_offset;
  if (!o.query_function.empty()) p.query_function = o.query_function;
  if (!o.userdata_param.empty()) p.userdata_param = o.userdata_param;
  if (o.called_once) p.called_once = true;
}

}  // namespace

void infer_parameters(Model& model, const spec::Spec& spec) {
  for (auto& f : model.functions) {
    f.returns_status = f.result.kind == TypeKind::Enum && f.result.name == spec.status_type;
    for (auto& p : f.params) {
      infer_one(p, f, model);
      const std::string symbol = f.alias_of.empty() ? f.name : f.alias_of;
      const spec::ParamOverride* o = spec.override_for(f.name, p.name);
      if (!o) o = spec.override_for(symbol, p.name);
      if (o) apply_override(p, *o);
    }
    link_counts(f);
    link_lengths(f);
    link_userdata(f);
    for (auto& p : f.params)
      if (p.role == Role::Unresolved && p.skip_reason.empty()) p.skip_reason = "no rule for " + p.type.spelling;
  }
}

}  // namespace cubind::passes

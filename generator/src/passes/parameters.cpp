// General rules for how each C parameter crosses into Python. The rules read
// the type, the header's own [in]/[out] annotations and sibling functions
// (`fGetPTX` has `fGetPTXSize`); the spec overrides what they get wrong.
#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <stdexcept>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

namespace {

bool is_char(const Type& t) { return t.kind == TypeKind::Integer && t.canonical == "char"; }
bool is_void(const Type& t) { return t.kind == TypeKind::Void; }
// A struct defined nowhere (`typedef struct ucp_address ucp_address_t;`):
// only its address crosses, as a void*'s does.
bool is_opaque(const Type& t) { return t.kind == TypeKind::Record && t.size <= 0; }
bool is_value(const Type& t) {
  return t.kind == TypeKind::Integer || t.kind == TypeKind::Floating || t.kind == TypeKind::Bool ||
         t.kind == TypeKind::Enum || t.kind == TypeKind::Handle;
}
bool has_prefix_word(const std::string& n, const std::string& prefix) {
  return n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
         std::isupper(static_cast<unsigned char>(n[prefix.size()]));
}
bool has_suffix(const std::string& n, const std::string& suffix) {
  return n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether the spec's count naming says this integer counts an array.
bool is_count_name(const std::string& n, const spec::Conventions& c) {
  for (const auto& prefix : c.count_prefixes)
    if (has_prefix_word(n, prefix)) return true;
  for (const auto& suffix : c.count_suffixes)
    if (has_suffix(n, suffix)) return true;
  return std::find(c.count_names.begin(), c.count_names.end(), n) != c.count_names.end();
}

bool has_count(const Function& f, const spec::Conventions& c) {
  for (const auto& p : f.params)
    if (p.type.kind == TypeKind::Integer && is_count_name(p.name, c)) return true;
  return false;
}

// The sibling function the spec's rewrite names, where the model has it.
std::string sibling(const Function& f, const std::optional<spec::Rewrite>& rule, const Model& m) {
  if (!rule) return "";
  const std::regex match(rule->match);
  if (!std::regex_match(f.name, match)) return "";
  const std::string name = std::regex_replace(f.name, match, rule->replace);
  return m.function(name) ? name : "";
}

// An [out] annotation, or the spec's wording for outputs ("Returned ...").
bool documented_as_output(const DocParam* doc, const spec::Conventions& c) {
  if (!doc) return false;
  if (doc->direction == "out") return true;
  for (const auto& wording : c.output_wording)
    if (std::regex_match(doc->text, std::regex("(" + wording + ")\\b.*", std::regex::icase))) return true;
  return false;
}

void infer_pointer(Param& p, const Function& f, const Model& m, const spec::Conventions& c) {
  const Type& pointee = p.type.pointee();
  const DocParam* doc = f.doc.param(p.name);
  const std::string annotated = doc ? doc->direction : "";
  if (pointee.kind == TypeKind::FunctionPointer) {
    p.skip_reason = "pointer to a function pointer";
  } else if (is_char(pointee) && pointee.is_const) {
    p.role = Role::String;
  } else if (is_char(pointee)) {
    p.query_function = sibling(f, c.size_query, m);
    if (!p.query_function.empty()) {
      p.role = Role::Buffer;  // written: mark_written_buffers
    } else if (documented_as_output(doc, c)) {
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
  } else if (is_void(pointee) || is_opaque(pointee)) {
    p.role = Role::VoidPtr;  // its size: link_buffer_sizes
  } else if (pointee.kind == TypeKind::Pointer && (is_void(pointee.pointee()) || is_opaque(pointee.pointee())) &&
             !pointee.is_const && documented_as_output(doc, c)) {
    p.role = Role::OutAddress;
    p.direction = Direction::Out;
  } else if (pointee.kind == TypeKind::Pointer && is_void(pointee.pointee()) && has_count(f, c)) {
    p.role = Role::Array;  // void* values (JIT option values): ints or buffers
  } else if (pointee.kind == TypeKind::Pointer && !pointee.is_const && pointee.pointee().is_const &&
             (pointee.pointee().kind == TypeKind::Handle || pointee.pointee().kind == TypeKind::Record)) {
    // `const CUgraphNode **dependencies_out`: the call points it at an array
    // of its own; the count comes in another output (link_returned_counts).
    p.role = Role::ReturnedArray;
    p.direction = Direction::Out;
  } else if (pointee.kind == TypeKind::Record) {
    const bool out = !pointee.is_const && documented_as_output(doc, c);
    p.role = out ? Role::RecordOut : Role::RecordIn;
    p.direction = out ? Direction::Out : Direction::In;
  } else if (pointee.is_const && is_value(pointee)) {
    p.role = Role::Array;
  } else if (is_value(pointee)) {
    if (pointee.kind == TypeKind::Handle && (annotated == "in" || annotated == "in,out" || annotated == "inout")) {
      p.role = Role::InOutHandle;
      p.direction = Direction::InOut;
    } else if (annotated == "in" || (!documented_as_output(doc, c) && has_count(f, c) && doc)) {
      p.role = Role::Array;  // given to the call with its count (`CUjit_option* options`)
    } else if (!(p.query_function = sibling(f, c.count_query, m)).empty()) {
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

void infer_one(Param& p, const Function& f, const Model& m, const spec::Conventions& c) {
  switch (p.type.kind) {
    case TypeKind::Integer:
    case TypeKind::Floating:
    case TypeKind::Bool:
      p.role = Role::Scalar;
      break;
    case TypeKind::Enum:
      p.role = Role::Enum;
      break;
    case TypeKind::Handle:
      p.role = Role::Handle;
      break;
    case TypeKind::Record:
      p.role = Role::Record;
      break;
    case TypeKind::FunctionPointer:
      p.role = Role::Callback;
      break;
    case TypeKind::Pointer:
      infer_pointer(p, f, m, c);
      break;
    default:
      p.skip_reason = "no rule for " + p.type.spelling;
      break;
  }
}

// How strongly an integer counts an array: its name names the array
// (`numDependencies` and `dependencies`) > it stands next to it > nearer before.
std::string stem(std::string n, const spec::Conventions& c) {
  for (const auto& prefix : c.count_prefixes)
    if (has_prefix_word(n, prefix)) n = n.substr(prefix.size());
  for (const auto& suffix : c.count_suffixes)
    if (has_suffix(n, suffix)) n = n.substr(0, n.size() - suffix.size());
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return n;
}

// One of the spec's count_names (`count`): it counts whatever it stands by,
// and names no array.
bool is_generic_count(const std::string& name, const spec::Conventions& c) {
  return std::find(c.count_names.begin(), c.count_names.end(), name) != c.count_names.end();
}

int count_affinity(const Function& f, size_t array, size_t count, const spec::Conventions& conv) {
  const std::string a = stem(f.params[array].name, conv), c = stem(f.params[count].name, conv);
  if (!c.empty() && !is_generic_count(c, conv) && (a.find(c) != std::string::npos || c.find(a) != std::string::npos))
    return 3;
  if (count + 1 == array || array + 1 == count) return 2;
  return 1;
}

// A struct pointer counts as an array only with clear evidence: the count is
// named for it, or a generic count follows it (`desc, count`).
bool counts_records(const Function& f, size_t array, size_t count, const spec::Conventions& c) {
  return count_affinity(f, array, count, c) == 3 || (count == array + 1 && is_generic_count(f.params[count].name, c));
}

// Links each array to its count. A struct pointer is an array only when a
// count clearly belongs to it; else it stays one struct.
void link_counts(Function& f, const spec::Conventions& conv) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    Param& p = f.params[i];
    const bool maybe_array = p.role == Role::RecordIn && p.type.pointee().is_const;
    if ((p.role != Role::Array && p.role != Role::StringArray && !maybe_array) || !p.count_param.empty()) continue;
    int best = 0;
    size_t chosen = 0;
    for (size_t j = 0; j < f.params.size(); ++j) {
      const Param& c = f.params[j];
      if (j == i || c.type.kind != TypeKind::Integer || !is_count_name(c.name, conv)) continue;
      if (maybe_array && !counts_records(f, i, j, conv)) continue;
      const int score = count_affinity(f, i, j, conv);
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
void link_lengths(Function& f, const spec::Conventions& conv) {
  const auto& lengths = conv.length_params;
  for (auto& p : f.params) {
    if (p.role != Role::OutBuffer || !p.count_param.empty()) continue;
    for (auto& c : f.params) {
      if (c.type.kind == TypeKind::Integer && std::find(lengths.begin(), lengths.end(), c.name) != lengths.end()) {
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

// A void* is read or written for as many bytes as a sibling query gives
// (nvJitLinkGetLinkedCubin has nvJitLinkGetLinkedCubinSize), else as the
// integer parameter the spec names for byte counts says (`cuMemcpyDtoH(dstHost,
// srcDevice, ByteCount)`, both sides of `cudaMemcpy(dst, src, count, kind)`).
// A count the spec gave stays. After link_userdata: user data has no size.
void link_buffer_sizes(Function& f, const Model& m, const spec::Conventions& conv) {
  const auto& names = conv.byte_count_params;
  for (auto& p : f.params) {
    if (p.role != Role::VoidPtr || !p.count_param.empty() || !p.query_function.empty()) continue;
    p.query_function = sibling(f, conv.size_query, m);
    if (!p.query_function.empty()) continue;
    for (const auto& c : f.params) {
      if (c.type.kind == TypeKind::Integer && std::find(names.begin(), names.end(), c.name) != names.end()) {
        p.count_param = c.name;
        break;
      }
    }
  }
}

bool is_one_of(const std::string& name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The spec gave this parameter its role: no rule changes it.
bool role_from_spec(const Function& f, const Param& p, const spec::Spec& spec) {
  const spec::ParamOverride* o = spec.override_for(f.name, p.name);
  if (!o && !f.alias_of.empty()) o = spec.override_for(f.alias_of, p.name);
  return o && o->role;
}

// The integer right after parameter `i` that the spec's names give as a
// length or a byte count (`nvvmAddModuleToProgram(prog, buffer, size, name)`),
// or null. Only the next one: a length counts the pointer it follows, and
// the `name` after `size` is a C string of its own.
const Param* length_after(const Function& f, size_t i, const spec::Conventions& conv) {
  if (i + 1 >= f.params.size()) return nullptr;
  const Param& c = f.params[i + 1];
  if (c.type.kind != TypeKind::Integer || c.role != Role::Scalar) return nullptr;
  return is_one_of(c.name, conv.length_params) || is_one_of(c.name, conv.byte_count_params) ? &c : nullptr;
}

// A `const char*` or `const void*` followed by its length is a buffer the
// call reads that many bytes of, not a C string: LLVM bitcode
// (nvvmAddModuleToProgram's buffer) and PTX read for `size` bytes
// (nvFatbinAddPTX's code) hold NUL bytes or need none. One rule for every
// library; a role the spec gave stays. After link_buffer_sizes, whose byte
// counts and queries come first.
void link_read_lengths(Function& f, const spec::Spec& spec) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    Param& p = f.params[i];
    const bool chars = p.role == Role::String;
    const bool uncounted =
        p.role == Role::VoidPtr && p.type.pointee().is_const && p.count_param.empty() && p.query_function.empty();
    if (!chars && !uncounted) continue;
    const Param* length = length_after(f, i, spec.conventions);
    if (!length || role_from_spec(f, p, spec)) continue;
    p.role = Role::VoidPtr;  // read only: const, so never a written buffer
    p.count_param = length->name;
  }
}

// A caller's buffer whose bytes are counted (a size query or a byte count)
// is written by the call where its C type lets the call write there: a char*
// (nvrtcGetPTX's ptx) or a void* without const (cuMemcpyDtoH's dstHost,
// nvJitLinkGetLinkedCubin's cubin). Such a buffer must be writable, in every
// library alike. Where a non-const void* is only read (cuMemHostRegister's p,
// registered, never written by the call), the spec says `direction = "in"`:
// a `direction` the spec gave stays. After link_buffer_sizes.
void mark_written_buffers(Function& f, const spec::Spec& spec) {
  for (auto& p : f.params) {
    const bool counted = !p.query_function.empty() || !p.count_param.empty();
    if (!counted || (p.role != Role::Buffer && p.role != Role::VoidPtr) || p.type.pointee().is_const) continue;
    const spec::ParamOverride* o = spec.override_for(f.name, p.name);
    if (!o && !f.alias_of.empty()) o = spec.override_for(f.alias_of, p.name);
    if (o && o->direction) continue;
    p.direction = Direction::Out;
  }
}

// An array its doc calls optional (the spec's optional_wording): NULL is
// valid with any count, so None is taken for it as the classic modules take it.
// Likewise an in/out handle (cuLogsDumpToFile's iterator: NULL dumps every log).
void mark_optional_arrays(Function& f, const spec::Conventions& c) {
  for (auto& p : f.params) {
    if (p.role != Role::Array && p.role != Role::InOutHandle) continue;
    const DocParam* doc = f.doc.param(p.name);
    if (!doc) continue;
    for (const auto& wording : c.optional_wording)
      if (std::regex_match(doc->text, std::regex("(" + wording + ")\\b.*", std::regex::icase))) p.optional = true;
  }
}

// An array filled up to a capacity: its count is read as the capacity and
// returned as the count the call wrote.
void link_inout_counts(Function& f) {
  for (auto& p : f.params) {
    if (p.role != Role::InOutArray) continue;
    p.direction = Direction::Out;
    Param* count = nullptr;
    for (auto& c : f.params)
      if (c.name == p.count_param) count = &c;
    if (!count || count->type.kind != TypeKind::Pointer || count->type.pointee().kind != TypeKind::Integer) {
      p.role = Role::Unresolved;
      p.skip_reason = "in/out array without an integer* count parameter";
      continue;
    }
    count->role = Role::InOutCount;
    count->direction = Direction::InOut;
    count->skip_reason.clear();
  }
}

// An array the library owns and points an output at is counted by an
// integer output named for a count (`numDependencies_out`); several such
// arrays may share it. The count stays an output of its own.
void link_returned_counts(Function& f, const spec::Conventions& conv) {
  for (auto& p : f.params) {
    if (p.role != Role::ReturnedArray || !p.count_param.empty()) continue;
    for (const auto& c : f.params) {
      if (c.role == Role::OutScalar && c.type.pointee().kind == TypeKind::Integer && is_count_name(c.name, conv)) {
        p.count_param = c.name;
        break;
      }
    }
    if (p.count_param.empty()) {
      p.role = Role::Unresolved;
      p.skip_reason = "returned array without an integer count output";
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
  if (o.on_error_return) p.on_error_return = std::to_string(*o.on_error_return);
  if (!o.attribute_param.empty()) p.attribute_param = o.attribute_param;
  if (!o.kept_until.empty()) p.kept_until = o.kept_until;
  if (!o.also_accepts.empty()) p.also_accepts = o.also_accepts;
  if (o.size) p.fixed_size = *o.size;
  if (!o.written_param.empty()) p.written_param = o.written_param;
}

}  // namespace

// An override must name a parameter the function has in these headers: a
// renamed parameter (13.5's `remainder` for `remaining`) would otherwise lose
// its override without a word. A function these headers lack is another
// version's: its overrides wait for it.
void check_overrides(const Model& model, const spec::Spec& spec) {
  std::string errors;
  for (const auto& o : spec.overrides) {
    if (o.optional) continue;
    bool function_seen = false, param_seen = false;
    std::string params;
    for (const auto& f : model.functions) {
      if (f.name != o.function && f.alias_of != o.function) continue;
      function_seen = true;
      for (const auto& p : f.params) {
        param_seen = param_seen || o.names(p.name);
        params += (params.empty() ? "" : ", ") + p.name;
      }
    }
    if (function_seen && !param_seen)
      errors += "\n  functions." + o.function + ".params." + o.param + ": " + o.function +
                " has no such parameter (its parameters: " + params + ")";
  }
  if (!errors.empty())
    throw std::runtime_error(
        "spec overrides of parameters these headers do not declare (list a renamed "
        "parameter's other names in other_names, or set optional = true where some versions "
        "lack it):" +
        errors);
}

// What a call keeps pointing at (spec `kept_until`) is owned by the handle it
// returns, and released by the named function taking that handle: the
// binding keeps the Python objects from one to the other.
void link_kept_alive(Model& model) {
  for (auto& f : model.functions) {
    for (auto& p : f.params) {
      if (p.kept_until.empty()) continue;
      const std::string where = f.name + "." + p.name + ": kept_until " + p.kept_until + ": ";
      const Param* owner = nullptr;
      for (const auto& o : f.params)
        if (o.role == Role::OutScalar && o.type.pointee().kind == TypeKind::Handle) owner = &o;
      if (!owner) throw std::runtime_error(where + f.name + " returns no handle to own it");
      Function* release = nullptr;
      for (auto& r : model.functions)
        if (r.name == p.kept_until) release = &r;
      if (!release) throw std::runtime_error(where + "no such function in the headers");
      const Param* released = nullptr;
      for (const auto& r : release->params)
        if (r.role == Role::Handle && r.type.name == owner->type.pointee().name) released = &r;
      if (!released)
        throw std::runtime_error(where + p.kept_until + " takes no " + owner->type.pointee().name + " to release");
      p.kept_by = owner->name;
      release->releases_kept = released->name;
    }
  }
}

// The spec's status_record (cuFile's CUfileError_t): checked to be a struct
// of the headers with a status_member of the status enum, whose type the
// functions returning it read the status as; nullopt where there is none.
// A copy: the loop below may add records, moving the model's.
static std::optional<Field> status_record_member(const Model& model, const spec::Spec& spec) {
  if (spec.status_record.empty()) return std::nullopt;
  const std::string where = "library.status_record: ";
  const Record* r = model.record(spec.status_record);
  if (!r) throw std::runtime_error(where + spec.status_record + " is not a struct of the headers");
  for (const auto& field : r->fields)
    if (field.name == spec.status_member) {
      if (field.type.kind != TypeKind::Enum || (field.type.name != spec.status_type && field.type.canonical != spec.status_type))
        throw std::runtime_error(where + spec.status_record + "." + spec.status_member + " is no " + spec.status_type);
      return field;
    }
  throw std::runtime_error(where + spec.status_record + " has no member " + spec.status_member);
}

static bool is_status_record(const Type& t, const spec::Spec& spec) {
  return t.kind == TypeKind::Record && (t.name == spec.status_record || t.canonical == spec.status_record);
}

void infer_parameters(Model& model, const spec::Spec& spec) {
  check_overrides(model, spec);
  const std::optional<Field> status_member = status_record_member(model, spec);
  for (auto& f : model.functions) {
    f.returns_status = f.result.kind == TypeKind::Enum && f.result.name == spec.status_type;
    // A struct holding the status (CUfileError_t) is the status: Python
    // receives its status member, as every other library's status enum.
    if (status_member && is_status_record(f.result, spec)) {
      f.returns_status = true;
      f.status_field = status_member->name;
      f.status_field_type = status_member->type;
    }
    for (auto& p : f.params) {
      infer_one(p, f, model, spec.conventions);
      const std::string symbol = f.alias_of.empty() ? f.name : f.alias_of;
      const spec::ParamOverride* o = spec.override_for(f.name, p.name);
      if (!o) o = spec.override_for(symbol, p.name);
      if (o) apply_override(p, *o);
    }
    for (auto& p : f.params) {
      if (p.role == Role::InOutScalar) p.direction = Direction::InOut;  // set by the spec: the header cannot say
      if (p.role == Role::OutArraySized) {
        p.direction = Direction::Out;
        if (p.count_param.empty() || p.written_param.empty())
          p.skip_reason = "out_array_sized without the spec's count_param and written_param";
      }
      if (p.role == Role::OutBytes) {
        p.direction = Direction::Out;
        if (p.fixed_size < 1) p.skip_reason = "out_bytes without the spec's size";
      }
    }
    link_counts(f, spec.conventions);
    link_lengths(f, spec.conventions);
    link_inout_counts(f);
    link_returned_counts(f, spec.conventions);
    link_userdata(f);
    link_buffer_sizes(f, model, spec.conventions);
    link_read_lengths(f, spec);
    mark_written_buffers(f, spec);
    mark_optional_arrays(f, spec.conventions);
    for (auto& p : f.params)
      if (p.role == Role::Unresolved && p.skip_reason.empty()) p.skip_reason = "no rule for " + p.type.spelling;
  }
}

// The doc text a rule reads: the whole comment but the return codes (cuda.h
// says "passing it to the API by casting to ::CUfunction" in the body, not
// under \\param).
static std::string doc_text(const Function& f, const Param& p) {
  std::string text = f.doc.brief + "\n" + f.doc.body;
  if (const DocParam* d = f.doc.param(p.name)) text += "\n" + d->text;
  return text;
}

void accept_documented_casts(Model& model, const spec::Spec& spec) {
  const auto& rules = spec.conventions.also_accepts;
  for (const auto& [handle, rule] : rules) {
    if (!model.handle(rule.type))
      throw std::runtime_error("conventions.also_accepts." + handle + ": no handle " + rule.type);
  }
  for (auto& f : model.functions) {
    for (auto& p : f.params) {
      // A spec override (set by infer_parameters) names a handle too.
      if (!p.also_accepts.empty() && !model.handle(p.also_accepts))
        throw std::runtime_error(f.name + "." + p.name + ": also_accepts: no handle " + p.also_accepts);
      if (p.role != Role::Handle) continue;
      const auto rule = rules.find(p.type.name);
      if (rule == rules.end()) continue;
      const std::regex pattern(rule->second.when_doc_matches, std::regex::ECMAScript | std::regex::icase);
      // Doc comments wrap lines: the phrase may span one.
      std::string text = doc_text(f, p);
      std::replace(text.begin(), text.end(), '\n', ' ');
      if (std::regex_search(text, pattern)) p.also_accepts = rule->second.type;
    }
  }
}

}  // namespace cubind::passes

// The conversion of every parameter, struct field, result and callback
// argument: which template converts it and the typed facts it needs. Emit
// maps these onto templates without deciding anything.
#include <stdexcept>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

namespace {

Type without_const(Type t) {
  t.is_const = false;
  return t;
}

// Enums convert as integers of their own signedness.
IntRange range_of(const Type& t, const Model& m) {
  IntRange r;
  r.bits = static_cast<int>(t.size > 0 ? t.size * 8 : 32);
  r.is_bool = t.kind == TypeKind::Bool;
  r.is_signed = t.is_signed;
  if (t.kind == TypeKind::Enum) {
    const Enum* e = m.enumeration(t.canonical);
    r.is_signed = e ? e->is_signed : true;
  }
  return r;
}

std::string record_class(const Model& m, const std::string& record) {
  const Record* r = m.record(record);
  return r && !r->public_name.empty() ? r->public_name : record;
}

Conversion named(const char* name, const Type& c_type) {
  Conversion c;
  c.name = name;
  c.c_type = c_type;
  return c;
}

Conversion output(const char* name, const Type& c_type) {
  Conversion c = named(name, c_type);
  c.input = false;
  c.output = true;
  return c;
}

const Param& find_param(const Function& f, const std::string& name) {
  for (const auto& p : f.params)
    if (p.name == name) return p;
  throw std::runtime_error(f.name + ": no parameter " + name);
}

// A query function is called with the caller's parameters of the same names;
// its last parameter receives the size or count.
// `typed_result`: the template declares the output with the query's own type.
void set_query(Conversion& c, const Function& f, const std::string& query, const Model& m, bool typed_result) {
  const Function* q = m.function(query);
  if (!q || q->params.empty()) throw std::runtime_error(f.name + ": bad query function " + query);
  for (size_t i = 0; i + 1 < q->params.size(); ++i) c.query_args.push_back(find_param(f, q->params[i].name).name);
  if (typed_result) c.query_result = q->params.back().type.pointee();
}

Conversion array_element(const Type& e, const Model& m) {
  const Type storage = without_const(e);
  if (e.kind == TypeKind::Handle) {
    Conversion c = named("params/element_handle", storage);
    c.handle = e.name;
    return c;
  }
  if (e.kind == TypeKind::Pointer) {
    Conversion c = named("params/element_address", storage);
    c.ownership = Ownership::Call;
    return c;
  }
  if (e.kind == TypeKind::Record) {
    Conversion c = named("params/element_record", storage);
    c.record_class = record_class(m, e.canonical);
    return c;
  }
  // An enum's items refuse members of another enum class, as its parameters do.
  Conversion c = named(e.kind == TypeKind::Enum ? "params/element_enum" : "params/element_integer", storage);
  c.range = range_of(e, m);
  return c;
}

// How each item of an array the call filled comes back to Python.
Conversion out_element(const Type& e, const Model& m) {
  if (e.kind == TypeKind::Handle) {
    Conversion c = named("params/out_element_handle", e);
    c.handle = e.name;
    return c;
  }
  if (e.kind == TypeKind::Record) {
    Conversion c = named("params/out_element_record", e);
    c.record_class = record_class(m, e.canonical);
    return c;
  }
  if (e.kind == TypeKind::Enum) {
    Conversion c = named("params/out_element_enum", e);
    c.enum_name = e.canonical;
    return c;
  }
  if (e.kind == TypeKind::Pointer) return named("params/out_element_address", e);
  return named("params/out_element_value", e);
}

// A value typed by an attribute: returned (out) or taken (in) by the
// conversions of its attribute table.
Conversion attribute_value(const Param& p, const Function& f, const Model& m) {
  const AttributeTable* table = attribute_table_of(m, f, p);
  if (!table) {
    Conversion none;
    none.skip_reason = "no attribute table for " + p.attribute_param;
    return none;
  }
  const bool out = p.role == Role::AttributeOut;
  const Param* attribute = attribute_param_of(f, p);
  // An array of attributes (counted like any array) gives a list of values.
  const bool many = attribute->type.kind == TypeKind::Pointer;
  // An array of values may take its sizes from an array of the caller's
  // (`cuMemRangeGetAttributes(data, dataSizes, attributes, ...)`).
  const bool sized = !p.count_param.empty();
  const char* name = !out            ? "params/attribute_in"
                     : many && sized ? "params/attribute_out_array_sized"
                     : many          ? "params/attribute_out_array"
                     : sized         ? "params/attribute_out_sized"
                                     : "params/attribute_out";
  Conversion c = out ? output(name, p.type) : named(name, p.type);
  c.late = true;  // reads the attribute's C value
  c.last = many;  // reads the attribute array (and the sizes array), converted late themselves
  // Counted by the attribute array's own count (Param::count_param of the
  // attribute parameter); a sized one's count_param gives the sizes.
  c.attribute_enum = table->enum_name;
  return c;
}

// How Python sets one attribute's value: an address cannot be kept alive
// past the call, so pointer-typed values are read-only.
Conversion attribute_in(const AttributeValue& v, const Model& m) {
  if (v.string_size) return named("params/in_element_string", v.type);
  if (v.type.kind == TypeKind::Pointer || v.is_array) {
    Conversion none;
    none.skip_reason = v.is_array ? "an array value is read-only" : "an address value is read-only";
    return none;
  }
  return array_element(v.type, m);
}

// A C bool is one byte, a Cython bint an int: the union keeps it as the
// one-byte integer it is.
Type attribute_storage(const Type& t) {
  if (t.kind != TypeKind::Bool) return t;
  Type byte;
  byte.kind = TypeKind::Integer;
  byte.spelling = byte.canonical = "unsigned char";
  byte.size = 1;
  return byte;
}

Conversion out_scalar(const Type& pointee) {
  if (pointee.kind == TypeKind::Enum) {
    Conversion c = output("params/out_enum", pointee);
    c.enum_name = pointee.canonical;
    return c;
  }
  if (pointee.kind == TypeKind::Handle) {
    Conversion c = output("params/out_handle", pointee);
    c.handle = pointee.name;
    c.ownership = Ownership::Returned;
    return c;
  }
  return output(pointee.kind == TypeKind::Floating ? "params/out_float" : "params/out_value", pointee);
}

// The index of the callback argument that carries the user data back.
int userdata_index(const Type& callback) {
  for (size_t i = 1; i < callback.inner.size(); ++i) {
    const Type& t = callback.inner[i];
    if (t.kind == TypeKind::Pointer && t.pointee().kind == TypeKind::Void) return static_cast<int>(i - 1);
  }
  return -1;
}

Conversion callback_argument(const Type& t, bool is_userdata) {
  if (is_userdata) return named("callback_args/userdata", t);
  switch (t.kind) {
    case TypeKind::Handle: {
      Conversion c = named("callback_args/handle", t);
      c.handle = t.name;
      return c;
    }
    case TypeKind::Pointer:
      return named("callback_args/address", t);
    case TypeKind::Enum: {
      Conversion c = named("callback_args/enum", t);
      c.enum_name = t.canonical;
      return c;
    }
    default:
      return named("callback_args/value", t);
  }
}

// The enum's member that reports a failure (mark_failure_members); null
// when the enum is not known.
const EnumValue* failure_member(const Type& t, const Model& m) {
  const Enum* e = m.enumeration(t.canonical);
  if (!e) return nullptr;
  for (const auto& v : e->values)
    if (v.name == e->failure_member) return &v;
  return nullptr;
}

// The module's class of a function-pointer type (mark_callback_classes),
// empty where it has none (an unnamed parameter type, a taken name).
std::string callback_class(const Type& t, const Model& m) {
  const Callback* named_type = t.name.empty() ? nullptr : m.callback(t.name);
  return named_type && named_type->has_class ? named_type->name : "";
}

Conversion callback(const Param& p, const Function& f, const Model& m) {
  const Type& t = p.type;
  Conversion c = named(p.userdata_param.empty() ? "params/in_callback_raw" : "params/in_callback", t);
  c.late = true;
  c.callback_type = t.name.empty() ? callback_typedef_name(f.name, p.name) : t.name;
  c.callback_class = callback_class(t, m);
  if (p.userdata_param.empty()) return c;
  c.ownership = p.called_once ? Ownership::Once : Ownership::Registry;
  // A callback returning a value tells C something when Python raised: the
  // spec's failure value where C can take one, else 0 (C carries on). An enum
  // (CUgraphRecaptureCallback's CUresult) is a status: the failure is the
  // value the C layer reports one with, its failure member (CUDA_ERROR_UNKNOWN).
  const Type& result = t.inner[0];
  if (!p.on_error_return.empty()) {
    c.error_value = p.on_error_return;
  } else if (result.kind == TypeKind::Enum) {
    const EnumValue* failure = failure_member(result, m);
    c.error_value = std::to_string(failure ? failure->value : 0);
  } else if (result.kind != TypeKind::Void) {
    c.error_value = "0";
  }
  const int user = userdata_index(t);
  c.userdata_argument = user;
  for (size_t i = 1; i < t.inner.size(); ++i)
    c.arguments.push_back(callback_argument(t.inner[i], static_cast<int>(i - 1) == user));
  return c;
}

Conversion param_conversion(const Param& p, const Function& f, const Model& m) {
  const Type& t = p.type;
  switch (p.role) {
    case Role::Enum:
      if (t.kind == TypeKind::Enum) {
        // A member of another enum class is refused, a plain int taken.
        // The template reads the enum class from the C type.
        Conversion c = named("params/in_enum", t);
        c.range = range_of(t, m);
        return c;
      }
      [[fallthrough]];
    case Role::Scalar:
    case Role::Count: {
      if (t.kind == TypeKind::Floating) return named("params/in_float", t);
      Conversion c = named("params/in_integer", t);
      c.range = range_of(t, m);
      return c;
    }
    case Role::Handle: {
      Conversion c = named(p.also_accepts.empty() ? "params/in_handle" : "params/in_handle_or", without_const(t));
      c.handle = t.name;
      c.also_handle = p.also_accepts;
      return c;
    }
    case Role::String: {
      Conversion c = named("params/in_string", t);
      c.ownership = Ownership::Call;
      return c;
    }
    case Role::StringArray: {
      Conversion c = named("params/in_string_array", t);
      c.late = true;
      c.ownership = Ownership::Call;
      return c;
    }
    case Role::Array: {
      Conversion c = named("params/array", without_const(t.pointee()));
      c.late = true;
      c.optional = p.optional;
      c.element.push_back(array_element(t.pointee(), m));
      return c;
    }
    case Role::Record: {
      Conversion c = named("params/record_value", t);
      c.record_class = record_class(m, t.canonical);
      return c;
    }
    case Role::RecordIn: {
      Conversion c = named("params/record_in", without_const(t.pointee()));
      c.record_class = record_class(m, t.pointee().canonical);
      c.ownership = Ownership::Call;
      return c;
    }
    case Role::RecordOut: {
      Conversion c = output("params/record_out", t.pointee());
      c.record_class = record_class(m, t.pointee().canonical);
      c.ownership = Ownership::Returned;
      return c;
    }
    case Role::OutAddress:
      return output("params/out_address", t.pointee());
    case Role::OutBuffer: {
      Conversion c = output("params/out_buffer", t.pointee());
      c.late = true;
      return c;
    }
    case Role::KernelParams: {
      Conversion c = named("params/kernel_params", t);
      c.ownership = Ownership::Call;
      return c;
    }
    case Role::Buffer:
    case Role::VoidPtr: {
      // A buffer object must hold the bytes the call reads or writes; an
      // int address stays the caller's word, as in C. One rule for every
      // library: a buffer the call writes (mark_written_buffers), char* or
      // void*, takes any writable buffer, sized by its query or its count.
      const bool written = p.direction == Direction::Out;
      const bool queried = !p.query_function.empty();
      const bool sized = !p.count_param.empty();
      // A `const char*` read for a count of bytes, not up to a NUL
      // (link_read_lengths: nvvmAddModuleToProgram's buffer, nvFatbinAddPTX's
      // code): the same check, its address cast to the char pointer the C
      // function takes (Cython casts no void*).
      const bool chars = t.kind == TypeKind::Pointer && t.pointee().kind == TypeKind::Integer &&
                         t.pointee().canonical == "char";
      const char* name = written && queried ? "params/into_buffer_queried"
                         : written && sized ? "params/into_buffer_sized"
                         : queried          ? "params/in_voidptr_queried"
                         : sized && chars   ? "params/in_chars_sized"
                         : sized            ? "params/in_voidptr_sized"
                         : t.kind == TypeKind::Pointer && t.pointee().kind == TypeKind::Record
                             // An opaque struct's address (ucp_config_t *): cast, as Cython casts no void*.
                             ? "params/in_opaque"
                             : "params/in_voidptr";
      Conversion c = named(name, t);
      c.ownership = Ownership::Call;
      // What the call writes into a char* is a C string: a shared empty or
      // one-byte bytes object is then spared the lone NUL (convert.pyx).
      c.c_string = written && p.role == Role::Buffer;
      if (queried) {
        c.late = true;  // the query reads the other parameters' C values
        set_query(c, f, p.query_function, m, false);
      } else if (sized) {
        c.late = true;  // reads the byte count's C value
      }
      return c;
    }
    case Role::Callback:
      return callback(p, f, m);
    case Role::UserData:
      return named("params/in_userdata", t);
    case Role::OutScalar:
      return out_scalar(t.pointee());
    case Role::OutString:
      return output("params/out_string", t.pointee());
    case Role::OutArray: {
      Conversion c = output("params/out_array", t.pointee());
      c.late = true;
      set_query(c, f, p.query_function, m, true);
      return c;
    }
    case Role::InOutCount: {
      Conversion c = named("params/inout_count", t.pointee());
      c.range = range_of(t.pointee(), m);
      c.output = true;
      return c;
    }
    case Role::InOutArray: {
      Conversion c = output("params/inout_array", without_const(t.pointee()));
      c.late = true;
      c.ownership = Ownership::Returned;
      c.element.push_back(out_element(t.pointee(), m));
      return c;
    }
    case Role::ReturnedArray: {
      const Type element = without_const(t.pointee().pointee());
      Conversion c = output("params/returned_array", element);
      c.element.push_back(out_element(element, m));
      return c;
    }
    case Role::OptionValues: {
      // Each value converted as its option says: reads the options' C array.
      const Type& option = find_param(f, p.attribute_param).type.pointee();
      Conversion c = named("params/option_values", without_const(t.pointee()));
      for (const auto& table : m.option_tables)
        if (table.enum_name == option.canonical || table.enum_name == option.name) c.attribute_enum = table.enum_name;
      c.ownership = Ownership::Call;
      c.late = true;
      return c;
    }
    case Role::InOutScalar: {
      // Read and overwritten (a mode swapped): taken as an input, its new
      // value returned. Enums only: no header has another such scalar.
      if (t.pointee().kind != TypeKind::Enum) {
        Conversion c;
        c.skip_reason = "in/out scalar of a non-enum type";
        return c;
      }
      Conversion c = named("params/inout_enum", without_const(t.pointee()));
      c.enum_name = t.pointee().canonical;
      c.range = range_of(t.pointee(), m);
      c.output = true;
      return c;
    }
    case Role::InOutHandle: {
      // Optional (NULL allowed): the handle the call advanced is returned,
      // as the classic modules return cuLogsDumpToFile's iterator.
      Conversion c = named(p.optional ? "params/inout_handle_optional" : "params/inout_handle", t.pointee());
      c.handle = t.pointee().name;
      c.output = p.optional;
      return c;
    }
    case Role::OutArraySized: {
      Conversion c = output("params/out_array_sized", without_const(t.pointee()));
      c.late = true;  // reads the capacity's and, after the call, the count's C values
      c.ownership = Ownership::Returned;
      c.element.push_back(out_element(t.pointee(), m));
      return c;
    }
    case Role::OutBytes: {
      Conversion c = output("params/out_bytes", t.pointee());
      c.fixed_count = p.fixed_size;
      return c;
    }
    case Role::AttributeOut:
    case Role::AttributeIn:
      return attribute_value(p, f, m);
    case Role::AttributeSize: {
      // Set to the size of the attribute's value: the caller never sees it.
      const AttributeTable* table = attribute_table_of(m, f, p);
      Conversion c = named("params/attribute_size", t.pointee());
      c.input = false;
      c.late = true;  // reads the attribute's C value
      c.attribute_enum = table ? table->enum_name : "";
      return c;
    }
    case Role::Unresolved:
      break;
  }
  Conversion none;
  none.skip_reason = p.skip_reason.empty() ? "no conversion for role " + std::string(to_string(p.role)) : p.skip_reason;
  return none;
}

// The value after which the C layer's caller checks for a Python exception
// (the library could not be loaded): one C rarely returns.
std::string error_value(const Type& result, const Model& m) {
  switch (result.kind) {
    case TypeKind::Void:
    case TypeKind::Record:
      return "";  // no struct value is rarer than another
    case TypeKind::Pointer:
    case TypeKind::Handle:
      return "NULL";
    case TypeKind::Enum: {
      const EnumValue* failure = failure_member(result, m);
      return failure ? failure->name : "";
    }
    default:
      return "-1";
  }
}

Conversion result_conversion(const Function& f, const Model& m) {
  const Type& r = f.result;
  Conversion c;
  if (f.returns_status) {
    // From a status struct (CUfileError_t), its status member's enum.
    c = named("results/status", f.status_field.empty() ? r : f.status_field_type);
  } else if (!f.status_pointer_enum.empty()) {
    c = named("results/status_pointer", r);
    c.enum_name = f.status_pointer_enum;
  } else if (r.kind == TypeKind::Pointer) {
    c = named("results/bytes", r);
  } else if (r.kind == TypeKind::Enum) {
    c = named("results/enum", r);
    c.enum_name = r.canonical;
  } else if (r.kind == TypeKind::Handle) {
    c = named("results/address", r);
  } else if (r.kind == TypeKind::Record) {
    c = named("results/record", r);
    c.record_class = record_class(m, r.canonical);
    c.ownership = Ownership::Returned;
  } else if (r.kind == TypeKind::Void) {
    c = named("results/none", r);
  } else {
    c = named(r.kind == TypeKind::Floating ? "results/float" : "results/value", r);
  }
  c.input = false;
  c.output = true;
  // A function compiled in from the header (driver_functions.h's
  // make_cudaPos) loads nothing, so it has no loader error to raise; the
  // others may, and are checked after their error value (or always).
  if (f.header_only)
    c.raises = false;
  else if (!f.status_pointer_enum.empty())
    // Its first error is a bound no call returns (UCS_ERR_LAST): NULL, the
    // common immediate completion, must not make a caller without the GIL
    // take it to look for an exception.
    c.error_value = "<" + r.name + ">(" + std::to_string(f.status_pointer_first_error) + ")";
  else
    c.error_value = error_value(r, m);
  return c;
}

// How a fixed array field reads and writes each item in place; none (a
// skip reason) for an element type with no such conversion.
Conversion field_element(const Type& e, const Model& m) {
  if (e.kind == TypeKind::Integer || e.kind == TypeKind::Bool || (e.kind == TypeKind::Handle && !e.canonical.empty())) {
    // Integer value classes (cuuint64_t) among them read back as plain ints.
    Conversion c = named("fields/element_integer", e);
    c.range = range_of(e, m);
    return c;
  }
  if (e.kind == TypeKind::Record) {
    // A copy of the item, as NVIDIA's classic modules read an array of
    // structs (cudaEglFrame.planeDesc[1]): setting its field leaves the
    // parent as it was; assigning the list back writes it. A nested struct
    // or union field stays a view (fields/record).
    Conversion c = named("fields/element_record_copy", e);
    c.record_class = record_class(m, e.canonical);
    return c;
  }
  if (e.kind == TypeKind::Enum) {
    Conversion c = named("fields/element_enum", e);
    c.range = range_of(e, m);
    c.enum_name = e.canonical;
    return c;
  }
  if (e.kind == TypeKind::Floating) return named("fields/element_float", e);
  if (e.kind == TypeKind::Handle) {  // CUeglFrame's `CUarray pArray[3]`
    Conversion c = named("fields/element_handle", e);
    c.handle = e.name;
    return c;
  }
  // CUeglFrame's `void* pPitch[3]`: addresses, as a pointer field is; the
  // struct keeps no buffer alive for an item, so only an int is taken.
  if (e.kind == TypeKind::Pointer) return named("fields/element_address", e);
  Conversion none;
  none.skip_reason = "no conversion for a fixed array of " + std::string(to_string(e.kind));
  return none;
}

// A fixed array field: a char array is bytes (all of them, or up to the
// first NUL where the field is a C string), any other one a list whose items
// convert through their element.
Conversion fixed_array(const Type& t, const Model& m, bool c_string) {
  const Type& e = t.pointee();
  Conversion c;
  if (e.kind == TypeKind::Integer && e.canonical == "char") {
    c = named(c_string ? "fields/c_string" : "fields/chars", t);
  } else {
    Conversion item = field_element(e, m);
    if (!item.bound()) return item;
    c = named("fields/array", e);
    c.element.push_back(item);
  }
  c.fixed_count = t.count;
  return c;
}

}  // namespace

std::string callback_typedef_name(const std::string& function, const std::string& param) {
  return function + "_" + param + "_t";
}

Conversion field_conversion(const Field& f, const Model& m) {
  const Type& t = f.type;
  switch (t.kind) {
    case TypeKind::Integer:
    case TypeKind::Bool: {
      Conversion c = named("fields/scalar", t);
      c.range = range_of(t, m);
      return c;
    }
    case TypeKind::Floating:
      return named("fields/float", t);
    case TypeKind::Enum: {
      Conversion c = named("fields/enum", t);
      c.range = range_of(t, m);
      c.enum_name = t.canonical;
      return c;
    }
    case TypeKind::Handle: {
      Conversion c = named("fields/handle", t);
      c.handle = t.name;
      return c;
    }
    case TypeKind::Record: {
      Conversion c = named("fields/record", t);
      c.record_class = record_class(m, t.canonical);
      return c;
    }
    case TypeKind::Array:
      return fixed_array(t, m, f.c_string);
    case TypeKind::Pointer:
      if (f.kernel_params) {
        // Packed by the launch's own packer, kept alive by the struct.
        Conversion c = named("fields/kernel_params", t);
        c.ownership = Ownership::Struct;
        return c;
      }
      if (!f.count_field.empty() && t.pointee().kind == TypeKind::Handle) {
        // A list of handles: read as count_field items, set from a list the
        // struct keeps alive.
        Conversion c = named("fields/handle_array", without_const(t.pointee()));
        c.handle = t.pointee().name;
        c.count_field = f.count_field;
        c.ownership = Ownership::Struct;
        return c;
      }
      if (t.pointee().kind == TypeKind::Record && t.pointee().size > 0) {  // else opaque: its address
        Conversion c = named("fields/record_pointer", without_const(t.pointee()));
        c.record_class = record_class(m, t.pointee().canonical);
        c.ownership = Ownership::Struct;
        return c;
      }
      [[fallthrough]];
    case TypeKind::FunctionPointer: {
      Conversion c = named("fields/address", t);
      c.ownership = Ownership::Struct;
      c.callback_class = callback_class(t, m);
      return c;
    }
    default: {
      Conversion c;
      c.skip_reason = "no conversion for " + std::string(to_string(t.kind)) + " " + t.spelling;
      return c;
    }
  }
}

static Conversion handle_conversion(const Handle& h, const Model& m) {
  if (!h.is_integer) return named("handle.pyx", Type{});
  Type storage;
  for (const auto& t : m.typedefs)
    if (t.name == h.name) storage = t.type;
  Conversion c = named("integer_handle.pyx", storage);
  c.range = range_of(storage, m);
  // The converter's error value, after which Cython checks for an exception.
  c.error_value = c.range.is_signed ? "-1" : "0";
  return c;
}

void assign_conversions(Model& model) {
  for (auto& h : model.handles) h.conversion = handle_conversion(h, model);
  for (auto& f : model.functions) {
    if (!f.skip_reason.empty()) continue;
    for (auto& p : f.params) p.conversion = param_conversion(p, f, model);
    f.result_conversion = result_conversion(f, model);
  }
  for (auto& r : model.records)
    for (auto& field : r.fields)
      if (!field.name.empty()) field.conversion = field_conversion(field, model);
  for (auto& t : model.attribute_tables) {
    for (auto& v : t.values) {
      v.out = v.string_size                   ? named("params/out_element_string", v.type)
              : v.type.kind == TypeKind::Bool ? named("params/out_element_bool", v.type)
                                              : out_element(v.type, model);
      v.in = attribute_in(v, model);
      v.storage = attribute_storage(v.type);
      v.setter = v.string_size ? AttributeValue::Setter::FixedString : AttributeValue::Setter::Element;
    }
  }
}

}  // namespace cubind::passes

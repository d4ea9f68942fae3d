// How one value crosses between Python and C: a parameter, a struct field, a
// function's result or an argument C hands to a Python callback. The
// conversion pass decides it; emit only maps it onto its template.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/type.hpp"

namespace cubind::model {

// Who keeps the Python object behind a C pointer alive, and for how long.
enum class Ownership {
  None,        // a value is copied: nothing to keep
  Call,        // the argument itself, for the duration of the call
  Struct,      // the enclosing struct, while the field points into it
  Registry,    // the module's callback registry, while C may call it
  Once,        // the registry, until C has called it once
  Returned,    // a new Python object that owns the C storage
};

// The range of an integer in C (enums by their signedness): Python ints
// outside it are an OverflowError naming the parameter.
struct IntRange {
  int bits = 0;  // 0: not an integer conversion
  bool is_signed = false;
  bool is_bool = false;
};

struct Conversion {
  // The template that converts the value, relative to generator/templates/ without
  // ".mustache" ("params/in_integer", "fields/scalar", "results/enum").
  // Empty: no conversion exists and `skip_reason` says why.
  std::string name;
  std::string skip_reason;
  // The C type of the value as the converted code stores it (the pointee of
  // an output pointer, the element of an array, without top-level const for
  // storage the binding fills).
  Type c_type;
  IntRange range;
  std::string handle;        // handle class converted to/from
  std::string also_handle;   // another handle class taken too (Param::also_accepts)
  std::string enum_name;     // enum converted to/from
  std::string record_class;  // struct/union class converted to/from
  // The relations of a parameter to its siblings (which one counts it, the
  // query giving its size, the user data of a callback, the attribute typing
  // it) are the Param's facts (model.hpp), decided by the parameter pass and
  // read from there; a conversion holds only what it derives from them.
  // Fixed arrays (fields): their count.
  int64_t fixed_count = -1;
  std::string count_field;  // fields: the sibling field counting a pointer's items
  // Sizes known from another call (Param::query_function): the caller's
  // parameters it is given (in order, before the output it writes), the type
  // of that output.
  std::vector<std::string> query_args;
  Type query_result;
  // Callbacks: the C function pointer type (the user data parameter is
  // Param::userdata_param).
  std::string callback_type;
  // The module's class of that type (mark_callback_classes), whose instances
  // pass their function pointer; empty where the type has none.
  std::string callback_class;
  // The index in `arguments` of the one carrying the user data back; -1: none.
  int userdata_argument = -1;
  // Values typed by an attribute: the attribute enum (its AttributeTable);
  // the parameter holding the attribute is Param::attribute_param.
  std::string attribute_enum;
  // The conversion of each item (arrays), at most one.
  std::vector<Conversion> element;
  // Callbacks: how C's arguments reach the Python callable, in order.
  std::vector<Conversion> arguments;
  // C-layer results: the value after which Cython checks for an exception
  // (empty: always check).
  std::string error_value;
  // C-layer results: false where the function cannot raise (defined inline in
  // the header: nothing is loaded, so no loader error can reach the caller),
  // and Cython need not check for an exception after it (noexcept).
  bool raises = true;
  Ownership ownership = Ownership::None;
  bool input = true;    // taken from the Python caller
  bool output = false;  // returned to the Python caller
  bool late = false;    // converted after the others: reads their C values
  bool last = false;    // converted after the late ones: reads arrays that are late themselves
  // A buffer the call writes a NUL-terminated string into (a char*, not a
  // void*): its one-byte result is only the NUL.
  bool c_string = false;
  // An array that may be None (NULL) whatever its count (Param::optional).
  bool optional = false;

  bool bound() const { return !name.empty(); }
};

const char* to_string(Ownership ownership);

}  // namespace cubind::model

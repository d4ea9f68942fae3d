// How model types are spelled in Cython and in .pyi stubs.
#pragma once

#include <set>
#include <string>

#include "model/model.hpp"

namespace cubind::emit {

class TypeNames {
 public:
  // `prefix` qualifies names the C layer declares ("c." in the Python layer).
  TypeNames(const model::Model& model, std::string prefix);

  std::string cython(const model::Type& type) const;
  // The type without its top-level const: for storage the binding fills.
  std::string cython_mutable(model::Type type) const {
    type.is_const = false;
    return cython(type);
  }
  bool declared(const std::string& name) const { return declared_.count(name) != 0; }

 private:
  std::string named(const std::string& name) const { return prefix_ + name; }
  std::set<std::string> declared_;
  std::string prefix_;
};

// Cython's spelling of the bounds of an integer type: {"INT32_MIN", "INT32_MAX"}.
struct IntegerBounds {
  std::string helper;  // "as_signed" or "as_unsigned"
  std::string low;     // empty for unsigned
  std::string high;
};
IntegerBounds integer_bounds(const model::Type& type);

// The C type of a record as C can name it: `struct tag`, its typedef, or for
// an anonymous nested record `__typeof__` of the parent's field.
std::string record_c_spelling(const model::Model& model, const model::Record& r);

}  // namespace cubind::emit

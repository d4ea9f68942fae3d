// A C type as the model keeps it: what kind it is, how the header spells it,
// its size, and the types it is made of.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cubind::model {

enum class TypeKind {
  Void,
  Bool,
  Integer,
  Floating,
  Enum,
  Record,           // struct or union by value
  Handle,           // typedef of a pointer to an incomplete struct
  Pointer,          // pointee in inner[0]
  Array,            // element in inner[0], count in `count`
  FunctionPointer,  // result in inner[0], parameters in inner[1..]
  Unknown,
};

struct Type {
  TypeKind kind = TypeKind::Unknown;
  std::string spelling;   // as the header writes it
  std::string name;       // typedef/tag name where the type is named
  std::string canonical;  // builtin spelling for Integer/Floating/Bool
  bool is_const = false;
  bool is_signed = false;
  int64_t size = -1;   // bytes, -1 where unknown (incomplete, void)
  int64_t count = -1;  // Array element count
  std::vector<Type> inner;

  const Type& pointee() const { return inner.at(0); }
};

const char* to_string(TypeKind kind);

}  // namespace cubind::model

// libclang types -> model::Type.
#pragma once

#include <clang-c/Index.h>

#include <map>
#include <string>

#include "model/model.hpp"

namespace cubind::parse {

// Public names of records and enums by USR: typedef names, tags, and the
// names synthesised for anonymous nested records.
using NameTable = std::map<std::string, std::string>;

class TypeConverter {
 public:
  explicit TypeConverter(const NameTable& names) : names_(names) {}
  model::Type convert(CXType type) const;

 private:
  model::Type convert_unqualified(CXType type) const;
  model::Type convert_typedef(CXType type) const;
  model::Type convert_builtin(CXType type) const;
  model::Type convert_function(CXType function, const std::string& name) const;
  std::string decl_name(CXCursor decl) const;

  const NameTable& names_;
};

// True for a record declared without a name (anonymous member or type).
bool is_anonymous_record(CXCursor decl);

}  // namespace cubind::parse

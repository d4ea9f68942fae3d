// Small models built by hand, shared by the unit tests of the passes.
#pragma once

#include <string>
#include <vector>

#include "model/model.hpp"

namespace builders {

using namespace cubind::model;

// ---- types ----

inline Type builtin(TypeKind kind, const std::string& canonical, bool is_signed, int64_t size, bool is_const = false) {
  Type t;
  t.kind = kind;
  t.canonical = canonical;
  t.is_signed = is_signed;
  t.size = size;
  t.is_const = is_const;
  t.spelling = (is_const ? "const " : "") + canonical;
  return t;
}
inline Type int_t(bool is_const = false) { return builtin(TypeKind::Integer, "int", true, 4, is_const); }
inline Type size_t_t() {
  Type t = builtin(TypeKind::Integer, "unsigned long", false, 8);
  t.name = "size_t";
  t.spelling = "size_t";
  return t;
}
inline Type char_t(bool is_const = false) { return builtin(TypeKind::Integer, "char", true, 1, is_const); }
inline Type float_t() { return builtin(TypeKind::Floating, "float", false, 4); }
inline Type void_t(bool is_const = false) {
  Type t = builtin(TypeKind::Void, "void", false, -1, is_const);
  return t;
}

inline Type ptr(const Type& pointee, bool is_const = false) {
  Type t;
  t.kind = TypeKind::Pointer;
  t.inner.push_back(pointee);
  t.is_const = is_const;
  t.size = 8;
  t.spelling = pointee.spelling + (pointee.spelling.back() == '*' ? "*" : " *") + (is_const ? "const" : "");
  return t;
}

inline Type named(TypeKind kind, const std::string& name, int64_t size) {
  Type t;
  t.kind = kind;
  t.name = name;
  t.canonical = kind == TypeKind::Handle ? "" : name;
  t.spelling = name;
  t.size = size;
  return t;
}
inline Type handle_t(const std::string& name = "caseHandle") { return named(TypeKind::Handle, name, 8); }
inline Type enum_t(const std::string& name = "caseResult") { return named(TypeKind::Enum, name, 4); }
inline Type record_t(const std::string& name = "caseRecord") {
  Type t = named(TypeKind::Record, name, 16);
  t.spelling = "struct " + name;
  return t;
}

// `int (*)(void*, void*)`, or a named callback typedef.
inline Type callback_t(const std::string& name = "", std::vector<Type> args = {ptr(void_t()), ptr(void_t())}) {
  Type t;
  t.kind = TypeKind::FunctionPointer;
  t.name = name;
  t.size = 8;
  t.inner.push_back(int_t());
  std::string spelled;
  for (const auto& a : args) {
    spelled += (spelled.empty() ? "" : ", ") + a.spelling;
    t.inner.push_back(a);
  }
  t.spelling = name.empty() ? "int (*)(" + spelled + ")" : name;
  return t;
}

// ---- functions ----

inline Param param(const std::string& name, const Type& type) {
  Param p;
  p.name = name;
  p.py_name = name;  // as passes::name_python leaves a name Python can spell
  p.type = type;
  return p;
}

inline Function fn(const std::string& name, std::vector<Param> params, std::vector<DocParam> doc = {}) {
  Function f;
  f.name = name;
  f.result = enum_t();
  f.params = std::move(params);
  f.doc.params = std::move(doc);
  f.header = "case.h";
  return f;
}


}  // namespace builders

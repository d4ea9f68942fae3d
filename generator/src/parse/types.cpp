#include "parse/types.hpp"

#include "parse/libclang.hpp"

namespace cubind::parse {

using model::Type;
using model::TypeKind;

bool is_anonymous_record(CXCursor decl) {
  if (clang_Cursor_isAnonymousRecordDecl(decl)) return true;
  // libclang 14 spells an unnamed tag "", later ones "(unnamed ...)" or, when
  // a typedef names it, the typedef's name; the USR marks it in all of them.
  const std::string name = spelling(decl);
  if (name.empty() || name.find('(') != std::string::npos) return true;
  const std::string id = usr(decl);
  return id.find("@EA@") != std::string::npos || id.find("@SA@") != std::string::npos ||
         id.find("@UA@") != std::string::npos;
}

std::string TypeConverter::decl_name(CXCursor decl) const {
  auto it = names_.find(usr(decl));
  if (it != names_.end()) return it->second;
  return is_anonymous_record(decl) ? std::string() : spelling(decl);
}

Type TypeConverter::convert(CXType raw) const {
  // Newer libclang keeps `const` on the Elaborated node that unwrap() drops.
  Type t = convert_unqualified(unwrap(raw));
  if (clang_isConstQualifiedType(raw) && !t.is_const) {
    t.is_const = true;
    t.spelling = t.kind == TypeKind::Pointer ? t.spelling + "const" : "const " + t.spelling;
  }
  return t;
}

Type TypeConverter::convert_unqualified(CXType type) const {
  switch (type.kind) {
    case CXType_Typedef: return convert_typedef(type);
    case CXType_Pointer: {
      const CXType pointee = clang_getPointeeType(type);
      const CXType bare = unwrap(pointee);
      if (bare.kind == CXType_FunctionProto || bare.kind == CXType_FunctionNoProto) {
        Type t = convert_function(bare, "");
        t.is_const = clang_isConstQualifiedType(type);
        return t;
      }
      Type t;
      t.kind = TypeKind::Pointer;
      t.inner.push_back(convert(pointee));
      t.is_const = clang_isConstQualifiedType(type);
      t.size = clang_Type_getSizeOf(type);
      t.spelling = t.inner[0].spelling + (t.inner[0].spelling.back() == '*' ? "*" : " *");
      if (t.is_const) t.spelling += "const";
      return t;
    }
    case CXType_ConstantArray:
    case CXType_IncompleteArray: {
      Type t;
      t.kind = TypeKind::Array;
      t.inner.push_back(convert(clang_getArrayElementType(type)));  // keeps const
      t.count = type.kind == CXType_ConstantArray ? clang_getArraySize(type) : -1;
      t.size = clang_Type_getSizeOf(type);
      const std::string dim = "[" + (t.count >= 0 ? std::to_string(t.count) : "") + "]";
      const Type& e = t.inner[0];
      if (e.kind == TypeKind::Array) {  // int [2][4]: this dimension comes first
        const auto at = e.spelling.find(" [");
        t.spelling = e.spelling.substr(0, at) + " " + dim + e.spelling.substr(at + 1);
      } else {
        t.spelling = e.spelling + " " + dim;
      }
      return t;
    }
    case CXType_Enum:
    case CXType_Record: {
      Type t;
      const CXCursor decl = clang_getTypeDeclaration(type);
      t.kind = type.kind == CXType_Enum ? TypeKind::Enum : TypeKind::Record;
      t.name = decl_name(decl);
      t.canonical = t.name;  // the model entity, whatever typedef names the use
      t.is_const = clang_isConstQualifiedType(type);
      t.size = clang_Type_getSizeOf(type);
      // As the header writes it: by tag where it has one.
      const std::string tag = is_anonymous_record(decl) ? t.name : spelling(decl);
      if (t.kind == TypeKind::Enum) {
        t.spelling = "enum " + tag;
      } else {
        t.spelling = (clang_getCursorKind(decl) == CXCursor_UnionDecl ? "union " : "struct ") + tag;
      }
      if (t.is_const) t.spelling = "const " + t.spelling;
      return t;
    }
    case CXType_FunctionProto:
    case CXType_FunctionNoProto: return convert_function(type, "");
    default: return convert_builtin(type);
  }
}

Type TypeConverter::convert_typedef(CXType type) const {
  const CXCursor decl = clang_getTypeDeclaration(type);
  const std::string name = spelling(decl);
  const CXType underlying = unwrap(clang_getTypedefDeclUnderlyingType(decl));
  const CXType canonical = clang_getCanonicalType(type);
  Type t;
  if (canonical.kind == CXType_Pointer) {
    const CXType pointee = clang_getPointeeType(canonical);
    if (pointee.kind == CXType_Record && clang_Type_getSizeOf(pointee) == CXTypeLayoutError_Incomplete) {
      t.kind = TypeKind::Handle;
      t.size = clang_Type_getSizeOf(canonical);
    } else if (pointee.kind == CXType_FunctionProto || pointee.kind == CXType_FunctionNoProto) {
      // The prototype as written, so its arguments keep their typedefs.
      CXType written = underlying;
      while (written.kind == CXType_Typedef)
        written = unwrap(clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(written)));
      const CXType proto = written.kind == CXType_Pointer ? unwrap(clang_getPointeeType(written)) : pointee;
      t = convert_function(proto, name);
    } else {
      t = convert(underlying);
    }
  } else {
    t = convert(underlying);
  }
  t.name = name;
  t.is_const = clang_isConstQualifiedType(type);
  t.spelling = (t.is_const ? "const " : "") + name;
  return t;
}

Type TypeConverter::convert_function(CXType function, const std::string& name) const {
  Type t;
  t.kind = TypeKind::FunctionPointer;
  t.name = name;
  t.inner.push_back(convert(clang_getResultType(function)));
  const int n = clang_getNumArgTypes(function);
  std::string args;
  for (int i = 0; i < n; ++i) {
    t.inner.push_back(convert(clang_getArgType(function, static_cast<unsigned>(i))));
    args += (i ? ", " : "") + t.inner.back().spelling;
  }
  t.size = 8;
  t.spelling = name.empty() ? t.inner[0].spelling + " (*)(" + args + ")" : name;
  return t;
}

Type TypeConverter::convert_builtin(CXType type) const {
  Type t;
  t.is_const = clang_isConstQualifiedType(type);
  t.size = clang_Type_getSizeOf(type);
  switch (type.kind) {
    case CXType_Void: t.kind = TypeKind::Void; t.canonical = "void"; break;
    case CXType_Bool: t.kind = TypeKind::Bool; t.canonical = "_Bool"; break;
    case CXType_Char_S: t.kind = TypeKind::Integer; t.canonical = "char"; t.is_signed = true; break;
    case CXType_Char_U: t.kind = TypeKind::Integer; t.canonical = "char"; break;
    case CXType_SChar: t.kind = TypeKind::Integer; t.canonical = "signed char"; t.is_signed = true; break;
    case CXType_UChar: t.kind = TypeKind::Integer; t.canonical = "unsigned char"; break;
    case CXType_Short: t.kind = TypeKind::Integer; t.canonical = "short"; t.is_signed = true; break;
    case CXType_UShort: t.kind = TypeKind::Integer; t.canonical = "unsigned short"; break;
    case CXType_Int: t.kind = TypeKind::Integer; t.canonical = "int"; t.is_signed = true; break;
    case CXType_UInt: t.kind = TypeKind::Integer; t.canonical = "unsigned int"; break;
    case CXType_Long: t.kind = TypeKind::Integer; t.canonical = "long"; t.is_signed = true; break;
    case CXType_ULong: t.kind = TypeKind::Integer; t.canonical = "unsigned long"; break;
    case CXType_LongLong: t.kind = TypeKind::Integer; t.canonical = "long long"; t.is_signed = true; break;
    case CXType_ULongLong: t.kind = TypeKind::Integer; t.canonical = "unsigned long long"; break;
    case CXType_Float: t.kind = TypeKind::Floating; t.canonical = "float"; break;
    case CXType_Double: t.kind = TypeKind::Floating; t.canonical = "double"; break;
    default: t.kind = TypeKind::Unknown; t.canonical = spelling(type); break;
  }
  t.spelling = (t.is_const ? "const " : "") + t.canonical;
  return t;
}

}  // namespace cubind::parse

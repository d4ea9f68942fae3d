#include "parse/declaration_names.hpp"

#include "parse/libclang.hpp"

namespace cubind::parse {

namespace {

bool is_record(CXCursorKind kind) { return kind == CXCursor_StructDecl || kind == CXCursor_UnionDecl; }

void name_nested(CXCursor record, const std::string& parent, NameTable& names) {
  int anonymous_members = 0;
  visit_children(record, [&](CXCursor child) {
    const CXCursorKind kind = clang_getCursorKind(child);
    if (is_record(kind) && clang_isCursorDefinition(child)) {
      const std::string id = usr(child);
      if (clang_Cursor_isAnonymousRecordDecl(child)) {
        names.emplace(id, parent + "_anon" + std::to_string(anonymous_members++));
      } else if (!is_anonymous_record(child)) {
        names.emplace(id, spelling(child));
      }
      // Records used by a named field are named when the field is seen.
      if (names.count(id)) name_nested(child, names.at(id), names);
    } else if (kind == CXCursor_FieldDecl) {
      CXType type = unwrap(clang_getCursorType(child));
      while (type.kind == CXType_ConstantArray || type.kind == CXType_IncompleteArray)
        type = unwrap(clang_getArrayElementType(type));
      if (type.kind != CXType_Record) return;
      const CXCursor decl = clang_getTypeDeclaration(type);
      const std::string id = usr(decl);
      if (names.count(id) || !is_anonymous_record(decl)) return;
      names.emplace(id, parent + "_" + spelling(child));
      name_nested(decl, names.at(id), names);
    }
  });
}

}  // namespace

NameTable declaration_names(CXCursor unit, const std::set<std::string>& files) {
  NameTable names;
  std::vector<CXCursor> records;
  visit_children(unit, [&](CXCursor c) {
    if (!files.count(file_of(c))) return;
    const CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_TypedefDecl) {
      const CXType underlying = unwrap(clang_getTypedefDeclUnderlyingType(c));
      if (underlying.kind != CXType_Record && underlying.kind != CXType_Enum) return;
      names.emplace(usr(clang_getTypeDeclaration(underlying)), spelling(c));
    } else if ((is_record(kind) || kind == CXCursor_EnumDecl) && clang_isCursorDefinition(c)) {
      records.push_back(c);
    }
  });
  // Tags name what no typedef named; nested records follow their parent.
  for (CXCursor c : records) {
    const std::string id = usr(c);
    if (!names.count(id) && !is_anonymous_record(c)) names.emplace(id, spelling(c));
    if (names.count(id) && clang_getCursorKind(c) != CXCursor_EnumDecl) name_nested(c, names.at(id), names);
  }
  return names;
}

}  // namespace cubind::parse

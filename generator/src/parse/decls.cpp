#include "parse/decls.hpp"

#include <cctype>

#include "parse/comments.hpp"
#include "parse/libclang.hpp"

namespace cubind::parse {

using namespace cubind::model;

model::Doc doc_of(CXCursor c) {
  std::string raw = take(clang_Cursor_getRawCommentText(c));
  if (raw.empty()) raw = preceding_comment(c);
  // A trailing `/**< ... */` before this member documents the previous one.
  if (raw.rfind("/**<", 0) == 0 || raw.rfind("///<", 0) == 0 || raw.rfind("/*!<", 0) == 0) {
    unsigned comment_end = 0, cursor_start = 0;
    clang_getExpansionLocation(clang_getRangeEnd(clang_Cursor_getCommentRange(c)), nullptr, nullptr, nullptr,
                               &comment_end);
    clang_getExpansionLocation(clang_getRangeStart(clang_getCursorExtent(c)), nullptr, nullptr, nullptr,
                               &cursor_start);
    if (comment_end <= cursor_start) return {};
  }
  return raw.empty() ? model::Doc{} : parse_comment(raw);
}

namespace {
bool is_record(CXCursorKind kind) { return kind == CXCursor_StructDecl || kind == CXCursor_UnionDecl; }

// A cursor's extent as the file reads it: where a macro begins it
// (`cudaStreamAttrID attr`), clang's extent starts at the macro's definition.
CXSourceRange expanded_extent(CXTranslationUnit unit, CXCursor c) {
  const CXSourceRange extent = clang_getCursorExtent(c);
  auto expanded = [unit](CXSourceLocation at) {
    CXFile file = nullptr;
    unsigned offset = 0;
    clang_getExpansionLocation(at, &file, nullptr, nullptr, &offset);
    return clang_getLocationForOffset(unit, file, offset);
  };
  return clang_getRange(expanded(clang_getRangeStart(extent)), expanded(clang_getRangeEnd(extent)));
}

// The one type name a parameter's declaration writes (`cudaStreamAttrID` in
// `cudaStreamAttrID attr`), where it is not the name clang gives its type: a
// `#define` made it another (cudaLaunchAttributeID). Empty otherwise.
std::string written_name(CXCursor arg, const Type& type, const std::string& name) {
  if (type.kind == TypeKind::FunctionPointer) return "";
  CXTranslationUnit unit = clang_Cursor_getTranslationUnit(arg);
  CXToken* tokens = nullptr;
  unsigned n = 0;
  clang_tokenize(unit, expanded_extent(unit, arg), &tokens, &n);
  std::vector<std::string> names;
  for (unsigned i = 0; i < n; ++i)
    if (clang_getTokenKind(tokens[i]) == CXToken_Identifier)
      names.push_back(take(clang_getTokenSpelling(unit, tokens[i])));
  clang_disposeTokens(unit, tokens, n);
  if (!names.empty() && names.back() == name) names.pop_back();
  if (names.size() != 1) return "";
  // A word of clang's spelling (`enum cudaLimit`, `const caseImageKHR *`): the same name.
  std::string word;
  for (const char ch : type.spelling + " ") {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
      word += ch;
    } else {
      if (word == names[0]) return "";
      word.clear();
    }
  }
  return names[0];
}
}  // namespace

std::string DeclCollector::name_of(CXCursor decl) const {
  auto it = names_.find(usr(decl));
  return it == names_.end() ? spelling(decl) : it->second;
}

void DeclCollector::collect(CXCursor unit) {
  visit_children(unit, [&](CXCursor c) {
    auto file = files_.find(file_of(c));
    if (file == files_.end()) return;
    const std::string& header = file->second;
    const CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_FunctionDecl) {
      add_function(c, header);
    } else if (kind == CXCursor_EnumDecl && clang_isCursorDefinition(c)) {
      add_enum(c, header);
    } else if (is_record(kind) && clang_isCursorDefinition(c)) {
      add_record(c, header, "");
    } else if (kind == CXCursor_TypedefDecl) {
      add_typedef(c, header);
    }
  });
}

// C may name a record before its definition: a typedef of its tag
// (`typedef struct X_st X_v1;` thousands of lines before `struct X_st {...}`),
// a pointer to a record defined further on, or to itself among its own fields.
// The Cython declarations follow the headers' order, so such a record is
// declared forward at its first use; `forward_` keeps that position.
void DeclCollector::note_use(CXType type) {
  type = clang_getCanonicalType(type);
  while (type.kind == CXType_Pointer || type.kind == CXType_ConstantArray || type.kind == CXType_IncompleteArray)
    type = clang_getCanonicalType(type.kind == CXType_Pointer ? clang_getPointeeType(type)
                                                              : clang_getArrayElementType(type));
  if (type.kind == CXType_FunctionProto) {
    note_use(clang_getResultType(type));
    for (int i = 0; i < clang_getNumArgTypes(type); ++i) note_use(clang_getArgType(type, static_cast<unsigned>(i)));
    return;
  }
  if (type.kind != CXType_Record) return;
  const CXCursor decl = clang_getTypeDeclaration(type);
  // A record never defined is opaque: a handle declares it itself.
  if (clang_Cursor_isNull(clang_getCursorDefinition(decl))) return;
  const std::string id = usr(decl);
  if (!defined_.count(id) && !forward_.count(id)) forward_.emplace(id, order_++);
}

void DeclCollector::add_function(CXCursor c, const std::string& header) {
  Function f;
  f.name = spelling(c);
  if (!seen_.insert("fn:" + f.name).second) return;
  f.header = header;
  f.result = types_.convert(clang_getCursorResultType(c));
  const int n = clang_Cursor_getNumArguments(c);
  for (int i = 0; i < n; ++i) {
    const CXCursor arg = clang_Cursor_getArgument(c, static_cast<unsigned>(i));
    Param p;
    p.name = spelling(arg);
    if (p.name.empty()) p.name = "arg" + std::to_string(i);
    p.type = types_.convert(clang_getCursorType(arg));
    p.written_name = written_name(arg, p.type, spelling(arg));
    f.params.push_back(p);
  }
  // Bodies are skipped when parsing: internal linkage or `inline` says it.
  f.header_only = clang_Cursor_getStorageClass(c) == CX_SC_Static || clang_Cursor_isFunctionInlined(c);
  f.doc = doc_of(c);
  model_.functions.push_back(f);
}

void DeclCollector::add_enum(CXCursor c, const std::string& header) {
  if (!seen_.insert(usr(c)).second) return;
  Enum e;
  e.name = name_of(c);
  if (!is_anonymous_record(c)) e.tag = spelling(c);
  e.header = header;
  const CXTypeKind integer = clang_getEnumDeclIntegerType(c).kind;
  e.is_signed = !(integer == CXType_UInt || integer == CXType_ULong || integer == CXType_ULongLong ||
                  integer == CXType_UShort || integer == CXType_UChar);
  visit_children(c, [&](CXCursor v) {
    if (clang_getCursorKind(v) != CXCursor_EnumConstantDecl) return;
    EnumValue value;
    value.name = spelling(v);
    value.value = e.is_signed ? clang_getEnumConstantDeclValue(v)
                              : static_cast<int64_t>(clang_getEnumConstantDeclUnsignedValue(v));
    value.doc = doc_of(v);
    e.values.push_back(value);
  });
  e.doc = doc_of(c);
  e.order = order_++;
  if (e.name.empty()) {
    // `enum { UCP_MEM_MAP_NONBLOCK = 1, ... };` names no type: its members are
    // integer constants, as a `#define` would make them (ucp.h's flags).
    for (const auto& v : e.values) {
      model::Constant k;
      k.name = v.name;
      k.kind = "int";
      k.int_value = v.value;
      k.is_unsigned = !e.is_signed;
      k.header = header;
      constants_.push_back(k);
    }
    return;
  }
  model_.enums.push_back(e);
}

Field DeclCollector::anonymous_member(CXCursor record, CXType parent_type) {
  Field f;
  f.type = types_.convert(clang_getCursorType(record));
  f.doc = doc_of(record);
  // An anonymous member starts where its first field does.
  visit_children(record, [&](CXCursor child) {
    if (f.offset_bits >= 0 || clang_getCursorKind(child) != CXCursor_FieldDecl) return;
    const std::string name = spelling(child);
    if (!name.empty()) f.offset_bits = clang_Type_getOffsetOf(parent_type, name.c_str());
  });
  return f;
}

void DeclCollector::add_record(CXCursor c, const std::string& header, const std::string& parent) {
  if (!seen_.insert(usr(c)).second) return;
  const CXType type = clang_getCursorType(c);
  Record r;
  r.name = name_of(c);
  if (!is_anonymous_record(c)) r.tag = spelling(c);
  r.is_union = clang_getCursorKind(c) == CXCursor_UnionDecl;
  r.is_complete = true;
  r.is_anonymous = r.tag.empty();
  r.parent = parent;
  r.header = header;
  r.size = clang_Type_getSizeOf(type);
  r.align = clang_Type_getAlignOf(type);
  r.doc = doc_of(c);
  visit_children(c, [&](CXCursor child) {
    const CXCursorKind kind = clang_getCursorKind(child);
    if (is_record(kind) && clang_isCursorDefinition(child)) {
      // Nested definitions come first so that users follow their types.
      add_record(child, header, r.name);
      if (clang_Cursor_isAnonymousRecordDecl(child)) r.fields.push_back(anonymous_member(child, type));
    } else if (kind == CXCursor_FieldDecl) {
      Field f;
      f.name = spelling(child);
      f.type = types_.convert(clang_getCursorType(child));
      note_use(clang_getCursorType(child));
      if (clang_Cursor_isBitField(child)) f.bit_width = clang_getFieldDeclBitWidth(child);
      f.offset_bits = clang_Cursor_getOffsetOfField(child);
      f.doc = doc_of(child);
      r.fields.push_back(f);
    }
  });
  // Read after the fields: a pointer to itself among them declares it forward.
  const auto forward = forward_.find(usr(c));
  if (forward != forward_.end()) r.forward_order = forward->second;
  r.order = order_++;
  defined_.insert(usr(c));
  model_.records.push_back(r);
}

void DeclCollector::add_typedef(CXCursor c, const std::string& header) {
  const std::string name = spelling(c);
  const CXType underlying = unwrap(clang_getTypedefDeclUnderlyingType(c));
  const Type type = types_.convert(clang_getCursorType(c));
  // A handle's record is declared by the handle itself.
  if (type.kind != TypeKind::Handle) note_use(underlying);
  if (underlying.kind == CXType_Record || underlying.kind == CXType_Enum) {
    const CXCursor decl = clang_getTypeDeclaration(underlying);
    if (underlying.kind == CXType_Record && clang_Cursor_isNull(clang_getCursorDefinition(decl)) &&
        seen_.insert(usr(decl)).second) {
      // `typedef struct ucp_address ucp_address_t;`, the struct defined
      // nowhere: an opaque record of the typedef's name, used by address.
      Record r;
      r.name = name;
      r.header = header;
      r.doc = doc_of(c);
      r.order = order_++;
      model_.records.push_back(r);
      return;
    }
    if (name_of(decl) == name) return;  // this typedef is the entity's own name
  }
  if (!seen_.insert("typedef:" + name).second) return;
  if (type.kind == TypeKind::Handle) {
    const CXType pointee = clang_getPointeeType(clang_getCanonicalType(clang_getCursorType(c)));
    Handle h;
    h.order = order_++;
    h.name = name;
    h.record_tag = spelling(clang_getTypeDeclaration(pointee));
    h.doc = doc_of(c);
    h.header = header;
    model_.handles.push_back(h);
  } else if (type.kind == TypeKind::FunctionPointer) {
    Callback cb;
    cb.order = order_++;
    cb.name = name;
    cb.type = type;
    cb.doc = doc_of(c);
    cb.header = header;
    model_.callbacks.push_back(cb);
  } else {
    model_.typedefs.push_back({order_++, name, types_.convert(underlying), doc_of(c), header});
  }
}

}  // namespace cubind::parse

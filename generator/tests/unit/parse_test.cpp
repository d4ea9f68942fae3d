// parse::parse_headers on small headers written to a temporary directory:
// what libclang hands the parse stage, checked where a golden case cannot
// (the  tests hold the right output of known parse bugs).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "model/model.hpp"
#include "parse/parser.hpp"

namespace {

using namespace cubind::model;
namespace fs = std::filesystem;

// A header `sub/case.h` in a directory of its own, removed afterwards.
struct TempHeader {
  fs::path dir;
  explicit TempHeader(const std::string& text) {
    dir = fs::path(::testing::TempDir()) /
          ("cubind_parse_" + std::to_string(getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "sub" / "case.h") << text;
  }
  ~TempHeader() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

Model parse(const std::string& header_text, const std::string& version_macro = "") {
  const TempHeader header(header_text);
  const fs::path& dir = header.dir;
  cubind::parse::ParseOptions o;
  o.library = "case";
  o.headers = {"sub/case.h"};
  o.include_dirs = {dir.string()};
  if (!version_macro.empty()) {
    o.version_header = "sub/case.h";
    o.version_macro = version_macro;
  }
  return cubind::parse::parse_headers(o);
}

const Record& record(const Model& m, const std::string& name) {
  for (const auto& r : m.records)
    if (r.name == name) return r;
  throw std::runtime_error("no record " + name);
}

const Field& field(const Record& r, const std::string& name) {
  for (const auto& f : r.fields)
    if (f.name == name) return f;
  throw std::runtime_error("no field " + name);
}

const Constant* constant(const Model& m, const std::string& name) {
  for (const auto& k : m.constants)
    if (k.name == name) return &k;
  return nullptr;
}

TEST(ParseHeaders, HeaderNamesAreAsIncludedNotPaths) {
  const Model m = parse("typedef enum { A = 0 } caseResult;\ncaseResult f(int x);\n#define K 1\n");
  EXPECT_EQ(m.library, "case");
  EXPECT_EQ(m.headers, std::vector<std::string>{"sub/case.h"});
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].header, "sub/case.h");
  ASSERT_EQ(m.enums.size(), 1u);
  EXPECT_EQ(m.enums[0].header, "sub/case.h");
  ASSERT_EQ(m.constants.size(), 1u);
  EXPECT_EQ(m.constants[0].header, "sub/case.h");
}

TEST(ParseHeaders, VersionMacro) {
  EXPECT_EQ(parse("#define CASE_VERSION 13000\n", "CASE_VERSION").cuda_version, 13000);
  EXPECT_EQ(parse("#define CASE_VERSION 12040\n", "CASE_VERSION").cuda_version, 12040);
  EXPECT_EQ(parse("#define CASE_VERSION 12040\n").cuda_version, 0);
}

TEST(ParseHeaders, MissingVersionMacroIsAnError) {
  EXPECT_THROW(parse("#define OTHER 1\n", "CASE_VERSION"), std::runtime_error);
}

TEST(ParseHeaders, HeaderErrorsAreFatal) {
  try {
    parse("unknown_type f(void);\n");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("errors while parsing the headers"), std::string::npos) << e.what();
  }
}

TEST(ParseHeaders, TrailingCommentsDocumentTheirOwnDeclaration) {
  const Model m = parse(
      "typedef enum {\n  A = 0, /**< doc of A */\n  B = 1  /**< doc of B */\n} caseE;\n"
      "struct S {\n  int a; /**< doc of a */\n  /** leading doc of b */\n  int b;\n};\n");
  ASSERT_EQ(m.enums.size(), 1u);
  EXPECT_EQ(m.enums[0].values[0].doc.body, "doc of A");
  EXPECT_EQ(m.enums[0].values[1].doc.body, "doc of B");
  EXPECT_EQ(field(record(m, "S"), "a").doc.body, "doc of a");
  EXPECT_EQ(field(record(m, "S"), "b").doc.body, "leading doc of b");
}

// An undocumented enumerator or field after one with a trailing `/**< */`
// comment gets that comment too: libclang's clang_Cursor_getRawCommentText
// returns the previous declaration's trailing comment, and parse/decls.cpp
// doc_of() takes it as is. It should drop a trailing (`/**<`, `///<`) comment
// that ends before the cursor starts.
TEST(ParseHeaders, UndocumentedMemberAfterATrailingCommentHasNoDoc) {
  const Model m = parse(
      "typedef enum {\n  A = 0, /**< doc of A */\n  B = 1,\n  C = 2\n} caseE;\n"
      "struct S {\n  int a; /**< doc of a */\n  int b;\n};\n");
  EXPECT_TRUE(m.enums[0].values[1].doc.empty()) << m.enums[0].values[1].doc.body;
  EXPECT_TRUE(field(record(m, "S"), "b").doc.empty()) << field(record(m, "S"), "b").doc.body;
}

TEST(ParseHeaders, UnnamedFunctionPointerParameterKeepsTypedefs) {
  const Model m = parse(
      "typedef enum { A = 0 } caseResult;\ntypedef struct s_st *caseStream;\n"
      "caseResult f(void (*cb)(caseStream s, caseResult r, void *u));\n");
  const Type& cb = m.functions.at(0).params.at(0).type;
  ASSERT_EQ(cb.kind, TypeKind::FunctionPointer);
  ASSERT_EQ(cb.inner.size(), 4u);
  EXPECT_EQ(cb.inner[1].kind, TypeKind::Handle);
  EXPECT_EQ(cb.inner[1].name, "caseStream");
  EXPECT_EQ(cb.inner[2].spelling, "caseResult");
}

// A callback typedef's parameters lose their typedefs: parse/types.cpp
// TypeConverter::convert_typedef() converts the pointee of the *canonical*
// type, so `typedef void (*cb)(caseStream, caseResult, void*)` comes out as
// (struct s_st *, enum caseResult, void *): the handle is a plain pointer and
// "enum caseResult" is no C spelling of the anonymous enum.
TEST(ParseHeaders, CallbackTypedefKeepsParameterTypedefs) {
  const Model m = parse(
      "typedef enum { A = 0 } caseResult;\ntypedef struct s_st *caseStream;\n"
      "typedef void (*caseCallback)(caseStream s, caseResult r, void *u);\n");
  ASSERT_EQ(m.callbacks.size(), 1u);
  const Type& cb = m.callbacks[0].type;
  ASSERT_EQ(cb.inner.size(), 4u);
  EXPECT_EQ(cb.inner[1].kind, TypeKind::Handle);
  EXPECT_EQ(cb.inner[1].name, "caseStream");
  EXPECT_EQ(cb.inner[2].spelling, "caseResult");
}

TEST(ParseHeaders, ArrayFields) {
  const Model m = parse("struct S { char name[16]; int grid[2][4]; };\n");
  const Type& name = field(record(m, "S"), "name").type;
  EXPECT_EQ(name.kind, TypeKind::Array);
  EXPECT_EQ(name.count, 16);
  EXPECT_EQ(name.spelling, "char [16]");
  const Type& grid = field(record(m, "S"), "grid").type;
  EXPECT_EQ(grid.count, 2);
  EXPECT_EQ(grid.pointee().count, 4);
}

// parse/types.cpp convert(), the ConstantArray case, appends the outer count
// after the element's spelling: `int grid[2][4]` is spelled "int [4] [2]".
TEST(ParseHeaders, TwoDimensionalArraySpelling) {
  const Model m = parse("struct S { int grid[2][4]; };\n");
  EXPECT_EQ(field(record(m, "S"), "grid").type.spelling, "int [2][4]");
}

// model.hpp says Type::spelling is "as the header writes it"; a record that a
// typedef names is spelled "struct <typedef name>" even where the header writes
// its tag (parse/types.cpp convert(), the Record case): `struct d_st *` becomes
// "struct caseDim *", which is no C type.
TEST(ParseHeaders, PointerToTaggedStructIsSpelledWithTheTag) {
  const Model m = parse("typedef struct d_st { int x; } caseDim;\nstruct S { struct d_st *dim; };\n");
  EXPECT_EQ(field(record(m, "S"), "dim").type.spelling, "struct d_st *");
}

TEST(ParseHeaders, NumericConstants) {
  const Model m = parse(
      "#define K_INT 42\n#define K_NEG (-7)\n#define K_U 0xffffffffU\n#define K_F 1.5f\n"
      "#define K_PTR ((void*)0x01)\n#define K_BAD (1 +)\n#define __K_RESERVED 1\n");
  ASSERT_NE(constant(m, "K_INT"), nullptr);
  EXPECT_EQ(constant(m, "K_INT")->int_value, 42);
  EXPECT_EQ(constant(m, "K_NEG")->int_value, -7);
  EXPECT_TRUE(constant(m, "K_U")->is_unsigned);
  EXPECT_EQ(constant(m, "K_U")->int_value, 4294967295);
  EXPECT_EQ(constant(m, "K_F")->kind, "float");
  EXPECT_DOUBLE_EQ(constant(m, "K_F")->float_value, 1.5);
  EXPECT_EQ(constant(m, "K_PTR")->kind, "int");
  EXPECT_EQ(constant(m, "K_PTR")->int_value, 1);
  EXPECT_EQ(constant(m, "K_BAD"), nullptr);
  EXPECT_EQ(constant(m, "__K_RESERVED"), nullptr);
}

// String macros never become constants: parse/parser.cpp Evaluator::run()
// evaluates `__auto_type v = (NAME);`, and clang_Cursor_Evaluate gives no
// result for a parenthesised string literal (it does for the bare literal), so
// the CXEval_StrLiteral branch and Constant kind "string" are never reached.
TEST(ParseHeaders, StringMacroIsAStringConstant) {
  const Model m = parse("#define K_ARCH \"sm_90\"\n");
  ASSERT_NE(constant(m, "K_ARCH"), nullptr);
  EXPECT_EQ(constant(m, "K_ARCH")->kind, "string");
  EXPECT_EQ(constant(m, "K_ARCH")->string_value, "sm_90");
}

TEST(ParseHeaders, AliasesThroughMacros) {
  const Model m = parse(
      "#define __P(api) api ## _ptds\n#define f __P(f_v2)\n#define g g_v3\n"
      "int f_v2_ptds(int);\nint g_v3(void);\nint f(int);\nint g(void);\n");
  ASSERT_EQ(m.aliases.size(), 2u);
  EXPECT_EQ(m.aliases[0].name, "f");
  EXPECT_EQ(m.aliases[0].target, "f_v2_ptds");
  EXPECT_EQ(m.aliases[1].name, "g");
  EXPECT_EQ(m.aliases[1].target, "g_v3");
  ASSERT_EQ(m.functions.size(), 2u);  // `int f(int)` declares f_v2_ptds again
  EXPECT_EQ(m.functions[0].name, "f_v2_ptds");
}

}  // namespace

// passes::spell_compat_signatures and its parts: the signature text NVIDIA's
// C-level module names each capsule with, the exception clause, the names.
#include <gtest/gtest.h>

#include "builders.hpp"
#include "passes/passes.hpp"
#include "spec/spec.hpp"

namespace {

using namespace builders;
namespace passes = cubind::passes;
namespace spec = cubind::spec;

spec::Spec spec_with(const std::string& compat) {
  return spec::parse(R"([library]
name = "case"
c_module = "ccase"
py_module = "_case"
headers = ["case.h"]
status_type = "caseResult"
function_handles = ["caseGetProcAddress"]
[loader]
env_var = "CUBIND_CASE_LIBRARY"
[compat]
module = "_cycase"
serves = "cuda.bindings.cydriver"
)" + compat,
                     "compat_test.toml");
}

std::string text(const Type& t, const std::string& compat = "", const std::string& written = "") {
  return passes::compat_type_text(t, written, spec_with(compat));
}

TEST(CompatSignatures, MangledNameIsCythonsForATypeOfTheModule) {
  EXPECT_EQ(passes::cython_module_type("cuda.bindings.cydriver", "GLuint"), "__pyx_t_4cuda_8bindings_8cydriver_GLuint");
  EXPECT_EQ(passes::cython_module_type("cuda.bindings.cyruntime", "EGLint"),
            "__pyx_t_4cuda_8bindings_9cyruntime_EGLint");
}

TEST(CompatSignatures, ConstGoesOnThePointeeWhereverTheHeaderWritesIt) {
  EXPECT_EQ(text(ptr(char_t(true))), "char const *");
  EXPECT_EQ(text(ptr(ptr(char_t(true), true))), "char const **");  // const char *const *
  EXPECT_EQ(text(ptr(ptr(void_t()), false)), "void **");
  EXPECT_EQ(text(ptr(ptr(void_t(), true))), "void const **");  // void *const *
  EXPECT_EQ(text(ptr(char_t(true), true)), "char const *");    // const char *const, by value
  EXPECT_EQ(text(int_t()), "int");
}

TEST(CompatSignatures, NamesAreTheHeadersOwn) {
  Type u32 = builtin(TypeKind::Integer, "unsigned int", false, 4);
  u32.name = u32.spelling = "uint32_t";
  EXPECT_EQ(text(u32), "uint32_t");
  Type e = enum_t("cudaLimit");
  e.spelling = "enum cudaLimit";
  EXPECT_EQ(text(e), "enum cudaLimit");
  EXPECT_EQ(text(ptr(ptr(record_t("cudaGraphicsResource")))), "struct cudaGraphicsResource **");
  EXPECT_EQ(text(builtin(TypeKind::Integer, "unsigned long long", false, 8)), "unsigned PY_LONG_LONG");
  EXPECT_EQ(text(builtin(TypeKind::Integer, "long long", true, 8)), "PY_LONG_LONG");
}

TEST(CompatSignatures, ModuleTypesAreMangledKeepingTheirKeyword) {
  const std::string compat = "module_types = [\"GLuint\", \"caseList\"]\n";
  EXPECT_EQ(text(named(TypeKind::Integer, "GLuint", 4), compat), "__pyx_t_4cuda_8bindings_8cydriver_GLuint");
  Type e = enum_t("caseList");
  e.spelling = "enum caseList";
  EXPECT_EQ(text(e, compat), "enum __pyx_t_4cuda_8bindings_8cydriver_caseList");
  EXPECT_EQ(text(ptr(named(TypeKind::Integer, "GLuint", 4)), compat), "__pyx_t_4cuda_8bindings_8cydriver_GLuint *");
}

TEST(CompatSignatures, WrittenNameAndSpellingsReplaceClangs) {
  EXPECT_EQ(text(enum_t("cudaLaunchAttributeID"), "", "cudaStreamAttrID"), "cudaStreamAttrID");
  EXPECT_EQ(text(ptr(record_t("caseValue"), false), "module_types = [\"caseAttr\"]\n", "caseAttr"),
            "__pyx_t_4cuda_8bindings_8cydriver_caseAttr *");
  Type ssize = builtin(TypeKind::Integer, "long", true, 8);
  ssize.name = ssize.spelling = "ssize_t";
  EXPECT_EQ(text(ssize, "type_spellings = { ssize_t = \"Py_ssize_t\" }\n"), "Py_ssize_t");
}

TEST(CompatSignatures, SpelledOutFunctionPointerIsVoidPointerAndFunctionHandleKeepsItsPointer) {
  EXPECT_EQ(text(callback_t()), "void *");
  EXPECT_EQ(text(callback_t("CUhostFn")), "CUhostFn");
  EXPECT_EQ(text(handle_t("caseGetProcAddress")), "caseGetProcAddress *");
}

TEST(CompatSignatures, SignatureIsCythonsText) {
  const spec::Spec s = spec_with("");
  EXPECT_EQ(passes::compat_signature(fn("caseInit", {}), s), "caseResult (void)");
  EXPECT_EQ(passes::compat_signature(fn("caseGet", {param("a", ptr(int_t())), param("b", handle_t())}), s),
            "caseResult (int *, caseHandle)");
  Function name = fn("caseName", {param("r", enum_t())});
  name.result = ptr(char_t(true));
  EXPECT_EQ(passes::compat_signature(name, s), "char const *(caseResult)");
}

TEST(CompatSignatures, ExceptionIsNvidiasErrorValueForTheStatus) {
  const spec::Spec s = spec_with("error_value = \"CUDA_ERROR_NOT_FOUND\"\n");
  Function status = fn("caseInit", {});
  status.returns_status = true;
  EXPECT_EQ(passes::compat_exception(status, s.compat), "except? CUDA_ERROR_NOT_FOUND");
  Function name = fn("caseName", {});
  name.result = ptr(char_t(true));
  EXPECT_EQ(passes::compat_exception(name, s.compat), "except? NULL");
  Function value = fn("caseMake", {});
  value.result = record_t();
  EXPECT_EQ(passes::compat_exception(value, s.compat), "except *");
  // A status inside a struct (cuFile's CUfileError_t): no value to compare.
  status.status_field = "err";
  EXPECT_EQ(passes::compat_exception(status, s.compat), "except *");
}

TEST(CompatSignatures, NamesAddTheAbiSymbolAndHelpers) {
  Model m;
  m.functions.push_back(fn("caseGetCount", {}));
  m.functions.back().alias_of = "caseGetCount_v2";
  m.functions.push_back(fn("caseVersion", {}));
  m.functions.push_back(fn("caseSkipped", {}));
  m.functions.back().skip_reason = "no";
  m.helpers.push_back({"getVersion", "caseVersion", "case.h"});
  passes::spell_compat_signatures(m, spec_with("abi_names = true\n"));
  EXPECT_EQ(m.functions[0].compat_names, (std::vector<std::string>{"caseGetCount", "caseGetCount_v2"}));
  EXPECT_EQ(m.functions[1].compat_names, (std::vector<std::string>{"caseVersion", "getVersion"}));
  EXPECT_TRUE(m.functions[2].compat_signature.empty());
}

TEST(CompatSignatures, NoCompatSectionSpellsNothing) {
  Model m;
  m.functions.push_back(fn("caseInit", {}));
  spec::Spec s = spec_with("");
  s.compat = {};
  passes::spell_compat_signatures(m, s);
  EXPECT_TRUE(m.functions[0].compat_signature.empty());
  EXPECT_TRUE(m.functions[0].compat_names.empty());
}

std::string declared(Model& m, const Type& t, const std::string& compat = "", const std::string& written = "") {
  return passes::compat_type_declaration(m, t, written, spec_with(compat));
}

TEST(CompatDeclarations, ConstComesFirstAndKeywordsAreTheDeclaredTypes) {
  Model m;
  EXPECT_EQ(declared(m, ptr(ptr(char_t(true), true))), "const char **");  // text: char const **
  EXPECT_EQ(declared(m, builtin(TypeKind::Integer, "unsigned long long", false, 8)), "unsigned long long");
  EXPECT_EQ(declared(m, ptr(record_t("caseRecord"))), "caseRecord *");  // no record in the model: as named
  EXPECT_EQ(declared(m, callback_t()), "void *");
  EXPECT_TRUE(m.compat_types.empty());
}

TEST(CompatDeclarations, ModuleTypesArePrivateTypedefsNamedWithNvidiasText) {
  Model m;
  m.handles.push_back({});
  m.handles.back().name = "caseGetProcAddress";
  m.handles.back().is_function = true;
  const std::string compat = "module_types = [\"GLuint\", \"caseList\", \"caseGetProcAddress\"]\n";
  EXPECT_EQ(declared(m, ptr(named(TypeKind::Integer, "GLuint", 4)), compat), "_nv_GLuint *");
  Type e = enum_t("caseList");
  e.spelling = "enum caseList";
  EXPECT_EQ(declared(m, e, compat), "_nv_enum_caseList");
  // The private type holds the function handle's "*".
  EXPECT_EQ(declared(m, handle_t("caseGetProcAddress"), compat), "_nv_caseGetProcAddress");
  ASSERT_EQ(m.compat_types.size(), 3u);
  EXPECT_EQ(m.compat_types[0].cname, "__pyx_t_4cuda_8bindings_8cydriver_GLuint");
  EXPECT_EQ(m.compat_types[0].c_type, "GLuint");
  EXPECT_EQ(m.compat_types[1].cname, "enum __pyx_t_4cuda_8bindings_8cydriver_caseList");
  EXPECT_EQ(m.compat_types[1].of, "caseList");  // not declared by the model: clang's name
  EXPECT_EQ(m.compat_types[2].cname, "__pyx_t_4cuda_8bindings_8cydriver_caseGetProcAddress *");
  EXPECT_EQ(m.compat_types[2].of, "caseGetProcAddress");
  // Each private type once.
  declared(m, named(TypeKind::Integer, "GLuint", 4), compat);
  EXPECT_EQ(m.compat_types.size(), 3u);
}

TEST(CompatDeclarations, AKeywordCubindSpellsOtherwiseGetsAPrivateTypedef) {
  Model m;
  m.records.push_back({});
  m.records.back().name = m.records.back().tag = "caseDescr";  // cubind: cdef struct caseDescr
  Type descr = named(TypeKind::Record, "caseDescr", 16);       // NVIDIA's text: caseDescr
  EXPECT_EQ(declared(m, ptr(descr)), "_nv_caseDescr *");
  ASSERT_EQ(m.compat_types.size(), 1u);
  EXPECT_EQ(m.compat_types[0].cname, "caseDescr");
  EXPECT_TRUE(m.compat_types[0].mangled.empty());  // the header's own name: no #define
  // The keyword both ways: as declared.
  EXPECT_EQ(declared(m, ptr(record_t("caseDescr"))), "caseDescr *");
}

TEST(CompatDeclarations, AHandlesStructTagIsTheStructItsDeclarationNames) {
  Model m;
  m.handles.push_back({});
  m.handles.back().name = "caseResource_t";
  m.handles.back().record_tag = "caseResource";
  EXPECT_EQ(declared(m, ptr(ptr(record_t("caseResource")))), "_caseResource_t_struct **");
}

TEST(CompatSpec, RefusesAnUnknownKey) {
  EXPECT_THROW(spec_with("modul_types = []\n"), std::runtime_error);
  EXPECT_THROW(spec_with("abi_names = \"yes\"\n"), std::runtime_error);
  EXPECT_THROW(spec_with("cimports = { \"libcpp\" = \"bool\" }\n"), std::runtime_error);
}

}  // namespace

// passes::apply_filters and run_passes: what is skipped, and why.
#include <gtest/gtest.h>

#include "model/model.hpp"
#include "passes/passes.hpp"
#include "spec/spec.hpp"

namespace {

using namespace cubind::model;
namespace spec = cubind::spec;

Type status_t() {
  Type t;
  t.kind = TypeKind::Enum;
  t.name = t.canonical = t.spelling = "caseResult";
  t.size = 4;
  return t;
}

Type int_t() {
  Type t;
  t.kind = TypeKind::Integer;
  t.canonical = t.spelling = "int";
  t.is_signed = true;
  t.size = 4;
  return t;
}

Function fn(const std::string& name, Type result = status_t()) {
  Function f;
  f.name = name;
  f.result = result;
  f.header = "case.h";
  return f;
}

spec::Spec spec_with(const std::string& extra) {
  return spec::parse(R"([library]
name = "case"
c_module = "ccase"
py_module = "_case"
headers = ["case.h"]
status_type = "caseResult"
)" + extra,
                     "case.toml");
}

TEST(ApplyFilters, SpecSkipMatchesTheWholeName) {
  Model m;
  m.functions = {fn("caseGetInternal"), fn("caseGetInternalFlags"), fn("caseInternal")};
  cubind::passes::apply_filters(m, spec_with("[[skip]]\npattern = \"caseGet.*\"\nreason = \"internal\"\n"));
  EXPECT_EQ(m.functions[0].skip_reason, "internal");
  EXPECT_EQ(m.functions[1].skip_reason, "internal");
  EXPECT_EQ(m.functions[2].skip_reason, "");  // regex_match, not search
}

TEST(ApplyFilters, FirstMatchingSkipGivesTheReason) {
  Model m;
  m.functions = {fn("caseLegacy")};
  cubind::passes::apply_filters(m, spec_with("[[skip]]\npattern = \"caseLeg.*\"\nreason = \"first\"\n"
                                             "[[skip]]\npattern = \"case.*\"\nreason = \"second\"\n"));
  EXPECT_EQ(m.functions[0].skip_reason, "first");
}

TEST(ApplyFilters, ResultsWithoutConversion) {
  Type record;
  record.kind = TypeKind::Record;
  record.spelling = "struct caseProps";
  Type voidp;
  voidp.kind = TypeKind::Pointer;
  voidp.spelling = "void *";
  Type v;
  v.kind = TypeKind::Void;
  voidp.inner = {v};
  Type charp;
  charp.kind = TypeKind::Pointer;
  charp.spelling = "const char *";
  Type c = int_t();
  c.canonical = "char";
  c.is_const = true;
  charp.inner = {c};
  Model m;
  m.functions = {fn("caseProps", record), fn("caseAlloc", voidp), fn("caseName", charp), fn("caseCount", int_t()),
                 fn("caseVoid", v)};
  cubind::passes::apply_filters(m, spec_with(""));
  // A struct by value comes back as a new object (results/record).
  EXPECT_EQ(m.functions[0].skip_reason, "");
  EXPECT_EQ(m.functions[1].skip_reason, "returns void *, which has no conversion");
  EXPECT_EQ(m.functions[2].skip_reason, "");
  EXPECT_EQ(m.functions[3].skip_reason, "");
  EXPECT_EQ(m.functions[4].skip_reason, "");
}

TEST(ApplyFilters, FirstSkippedParameterGivesTheReason) {
  Function f = fn("caseGetLog");
  Param a, b;
  a.name = "log";
  a.skip_reason = "char* buffer without a size query function";
  b.name = "other";
  b.skip_reason = "second reason";
  f.params = {a, b};
  Model m;
  m.functions = {f};
  cubind::passes::apply_filters(m, spec_with(""));
  EXPECT_EQ(m.functions[0].skip_reason, "parameter log: char* buffer without a size query function");
}

TEST(RunPasses, AliasesComeFirstSoSkipsAndOverridesSeeThePublicName) {
  Model m;
  m.functions = {fn("caseOld_v2"), fn("caseKeep_v2")};
  Param p;
  p.name = "x";
  p.type = int_t();
  m.functions[1].params = {p};
  m.aliases = {{"caseOld", "caseOld_v2", "case.h"}, {"caseKeep", "caseKeep_v2", "case.h"}};
  cubind::passes::run_passes(
      m, spec_with("[[skip]]\npattern = \"caseOld\"\nreason = \"old\"\n"
                   "[functions.caseKeep.params.x]\nrole = \"count\"\n"));
  EXPECT_EQ(m.functions[0].name, "caseOld");
  EXPECT_EQ(m.functions[0].skip_reason, "old");
  EXPECT_EQ(m.functions[1].name, "caseKeep");
  EXPECT_EQ(m.functions[1].skip_reason, "");
  EXPECT_EQ(m.functions[1].params[0].role, Role::Count);
  EXPECT_TRUE(m.functions[1].returns_status);
}

}  // namespace

TEST(MarkGil, SpecPatternsKeepTheGilEverythingElseReleasesIt) {
  Model m;
  m.functions = {fn("caseGetCurrent"), fn("caseGetCurrentStream"), fn("caseSynchronize")};
  cubind::passes::mark_gil(m, spec_with("[gil]\nkeep = [\"caseGetCurrent\"]\n"));
  EXPECT_FALSE(m.functions[0].releases_gil);
  EXPECT_TRUE(m.functions[1].releases_gil);  // regex_match: the whole name
  EXPECT_TRUE(m.functions[2].releases_gil);
}

TEST(MarkGil, WithoutAGilTableEveryCallReleasesIt) {
  Model m;
  m.functions = {fn("caseGetCurrent")};
  m.functions[0].releases_gil = false;
  cubind::passes::mark_gil(m, spec_with(""));
  EXPECT_TRUE(m.functions[0].releases_gil);
}

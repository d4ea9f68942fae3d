// passes/convention.cpp: the status a function whose C return is not a status
// returns first, or none (mark_success_status), the function describing a
// status (mark_status_description), the classic helpers (bind_helpers).
#include <gtest/gtest.h>

#include <stdexcept>

#include "model/model.hpp"
#include "passes/passes.hpp"
#include "spec/spec.hpp"

namespace {

using namespace cubind::model;
namespace spec = cubind::spec;

Type enum_t(const std::string& name) {
  Type t;
  t.kind = TypeKind::Enum;
  t.name = t.canonical = t.spelling = name;
  t.size = 4;
  return t;
}

Type pointer_t() {
  Type t;
  t.kind = TypeKind::Pointer;
  t.spelling = "const char *";
  return t;
}

Function fn(const std::string& name, Type result, bool returns_status) {
  Function f;
  f.name = name;
  f.result = result;
  f.returns_status = returns_status;
  return f;
}

Model model_with_status() {
  Model m;
  Enum e;
  e.name = "caseResult";
  e.values = {{"CASE_ERROR", 7, {}}, {"CASE_SUCCESS", 0, {}}, {"CASE_OK", 1, {}}};
  m.enums = {e};
  m.functions = {fn("caseStatus", enum_t("caseResult"), true), fn("caseErrorString", pointer_t(), false),
                 fn("caseMode", enum_t("caseMode"), false)};
  return m;
}

spec::Spec spec_with(const std::string& extra) {
  return spec::parse("[library]\nname = \"case\"\nc_module = \"ccase\"\npy_module = \"_case\"\n"
                     "headers = [\"case.h\"]\nstatus_type = \"caseResult\"\n" +
                         extra,
                     "case.toml");
}

Model model_with_description() {
  Model m = model_with_status();
  Param code;
  code.name = "error";
  code.type = enum_t("caseResult");
  Param text;  // cuGetErrorString's pStr: an output beside the status
  text.name = "text";
  text.type = pointer_t();
  text.direction = Direction::Out;
  m.functions[1].params = {code, text};
  return m;
}

TEST(MarkStatusDescription, TheSpecsFunctionIsRecordedOnTheStatusEnum) {
  Model m = model_with_description();
  cubind::passes::mark_status_description(m, spec_with("status_description = \"caseErrorString\"\n"));
  EXPECT_EQ(m.enums[0].description_function, "caseErrorString");
  Model none = model_with_description();
  cubind::passes::mark_status_description(none, spec_with(""));
  EXPECT_EQ(none.enums[0].description_function, "");
}

TEST(MarkStatusDescription, AnUndeclaredSkippedOrMisshapenFunctionFailsTheGeneration) {
  const spec::Spec spec = spec_with("status_description = \"caseErrorString\"\n");
  Model undeclared = model_with_description();
  undeclared.functions.erase(undeclared.functions.begin() + 1);
  EXPECT_THROW(cubind::passes::mark_status_description(undeclared, spec), std::runtime_error);
  Model skipped = model_with_description();
  skipped.functions[1].skip_reason = "skipped";
  EXPECT_THROW(cubind::passes::mark_status_description(skipped, spec), std::runtime_error);
  Model no_param = model_with_status();  // caseErrorString() takes no status
  EXPECT_THROW(cubind::passes::mark_status_description(no_param, spec), std::runtime_error);
  Model two_inputs = model_with_description();
  two_inputs.functions[1].params[1].direction = Direction::In;
  EXPECT_THROW(cubind::passes::mark_status_description(two_inputs, spec), std::runtime_error);
}

TEST(MarkSuccessStatus, ByDefaultTheStatusMemberOfValueZeroLeadsEveryValueFunction) {
  Model m = model_with_status();
  cubind::passes::mark_success_status(m, spec_with(""));
  EXPECT_EQ(m.functions[0].success_status, "");  // returns its own status
  EXPECT_EQ(m.functions[1].success_status, "CASE_SUCCESS");
  EXPECT_EQ(m.functions[2].success_status, "CASE_SUCCESS");  // an enum result that is not the status
}

TEST(MarkSuccessStatus, TheSpecNamesTheMember) {
  Model m = model_with_status();
  cubind::passes::mark_success_status(m, spec_with("[conventions]\nsuccess_member = \"CASE_OK\"\n"));
  EXPECT_EQ(m.functions[1].success_status, "CASE_OK");
}

TEST(MarkSuccessStatus, AMemberTheStatusEnumLacksFailsTheGeneration) {
  Model m = model_with_status();
  EXPECT_THROW(cubind::passes::mark_success_status(m, spec_with("[conventions]\nsuccess_member = \"CASE_NOPE\"\n")),
               std::runtime_error);
}

TEST(MarkSuccessStatus, SkippedFunctionsNeedNone) {
  Model m = model_with_status();
  m.enums.clear();  // no status enum: nothing to return first
  m.functions[1].skip_reason = m.functions[2].skip_reason = "skipped";
  cubind::passes::mark_success_status(m, spec_with(""));
  EXPECT_EQ(m.functions[1].success_status, "");
  m.functions[1].skip_reason.clear();
  EXPECT_THROW(cubind::passes::mark_success_status(m, spec_with("")), std::runtime_error);
}

TEST(MarkSuccessStatus, TheSpecsValueOnlyFunctionsReturnTheirValueAlone) {
  Model m = model_with_status();
  cubind::passes::mark_success_status(m, spec_with("[functions.caseErrorString]\nresult = \"value\"\n"));
  EXPECT_TRUE(m.functions[1].value_only);
  EXPECT_EQ(m.functions[1].success_status, "");
  EXPECT_FALSE(m.functions[2].value_only);
  EXPECT_EQ(m.functions[2].success_status, "CASE_SUCCESS");
}

TEST(MarkSuccessStatus, AValueOnlyFunctionThatIsUndeclaredOrReturnsTheStatusFailsTheGeneration) {
  Model m = model_with_status();
  EXPECT_THROW(cubind::passes::mark_success_status(m, spec_with("[functions.caseNope]\nresult = \"value\"\n")),
               std::runtime_error);
  EXPECT_THROW(cubind::passes::mark_success_status(m, spec_with("[functions.caseStatus]\nresult = \"value\"\n")),
               std::runtime_error);
}

TEST(BindHelpers, EachHelperNamesABoundFunction) {
  Model m = model_with_status();
  m.functions[0].header = "case.h";
  const spec::Spec s = spec_with("[helpers]\ngetLocalStatus = \"caseStatus\"\n");
  ASSERT_EQ(s.helpers.size(), 1u);
  cubind::passes::bind_helpers(m, s);
  ASSERT_EQ(m.helpers.size(), 1u);
  EXPECT_EQ(m.helpers[0].name, "getLocalStatus");
  EXPECT_EQ(m.helpers[0].target, "caseStatus");
}

TEST(BindHelpers, AnUndeclaredOrSkippedFunctionFailsTheGeneration) {
  Model m = model_with_status();
  EXPECT_THROW(cubind::passes::bind_helpers(m, spec_with("[helpers]\nx = \"caseNope\"\n")), std::runtime_error);
  m.functions[0].skip_reason = "skipped";
  EXPECT_THROW(cubind::passes::bind_helpers(m, spec_with("[helpers]\nx = \"caseStatus\"\n")), std::runtime_error);
  EXPECT_THROW(spec_with("[helpers]\nx = 3\n"), std::runtime_error);
}

}  // namespace

namespace {

Param param(const std::string& name, Role role, bool input) {
  Param p;
  p.name = p.py_name = name;
  p.role = role;
  p.conversion.name = "x";
  p.conversion.input = input;
  return p;
}

}  // namespace

TEST(MarkClassicDefaults, AnInOutCountEndingTheInputsAsksForTheCount) {
  Model m = model_with_status();
  Function& f = m.functions[0];
  f.params = {param("graph", Role::Handle, true), param("nodes", Role::InOutArray, false),
              param("numNodes", Role::InOutCount, true)};
  Function g = f;
  g.name = "caseGetLevels";
  g.params.push_back(param("flags", Role::Scalar, true));  // a required input after it: no default
  m.functions.push_back(g);
  cubind::passes::mark_classic_defaults(m, spec_with(""));
  EXPECT_EQ(m.functions[0].params[2].py_default, "0");
  EXPECT_EQ(m.functions[0].params[0].py_default, "");
  EXPECT_EQ(m.functions.back().params[2].py_default, "");
}

TEST(ResolveOptionTypes, EachMemberAsItsDocCommentSaysElseTheSpec) {
  Model m = model_with_status();
  Enum fallback;
  fallback.name = "caseFallback";
  fallback.tag = "caseFallback_enum";
  Enum options;
  options.name = "caseOption";
  const auto member = [](const std::string& name, int64_t value, const std::string& body) {
    EnumValue v{name, value, {}};
    v.doc.body = body;
    return v;
  };
  options.values = {member("CASE_REGS", 0, "Registers\\n\nOption type: unsigned int\\n\nApplies to: all"),
                    member("CASE_TIME", 1, "Option type: float\\n"), member("CASE_LOG", 2, "Option type: char *\\n"),
                    member("CASE_FALLBACK", 3, "Option type: unsigned int for enumerated type ::caseFallback_enum"),
                    member("CASE_SECRET", 4, "internal"), member("CASE_COUNT", 5, "")};
  m.enums.push_back(fallback);
  m.enums.push_back(options);
  const spec::Spec s = spec_with(
      "[conventions]\noption_type_wording = \"Option type: ([^\\\\n\\\\\\\\]+)\"\n"
      "[option_types.caseOption]\nCASE_SECRET = \"int\"\n");
  cubind::passes::resolve_option_types(m, s);
  ASSERT_EQ(m.option_tables.size(), 1u);
  const auto& v = m.option_tables[0].values;
  ASSERT_EQ(v.size(), 5u);  // CASE_COUNT documents no type
  EXPECT_EQ(v[0].kind, OptionKind::Unsigned);
  EXPECT_EQ(v[1].kind, OptionKind::Float);
  EXPECT_EQ(v[2].kind, OptionKind::Buffer);
  EXPECT_EQ(v[3].kind, OptionKind::Enum);
  EXPECT_EQ(v[3].enum_name, "caseFallback");  // the tag's typedef
  EXPECT_EQ(v[4].kind, OptionKind::Signed);
}

TEST(ResolveOptionTypes, AnUnknownTypeFailsTheGeneration) {
  Model m = model_with_status();
  Enum options;
  options.name = "caseOption";
  EnumValue v{"CASE_ODD", 0, {}};
  v.doc.body = "Option type: double\\n";
  options.values = {v};
  m.enums.push_back(options);
  const spec::Spec s =
      spec_with("[conventions]\noption_type_wording = \"Option type: ([^\\\\n\\\\\\\\]+)\"\n[option_types.caseOption]\n");
  EXPECT_THROW(cubind::passes::resolve_option_types(m, s), std::runtime_error);
}

// UCX's ucs_status_ptr_t: a function returning it returns (status, request).
Model model_with_status_pointer() {
  Model m = model_with_status();
  m.enums[0].values.push_back({"CASE_ERR_LAST", -100, {}});
  Type sp = pointer_t();
  sp.spelling = sp.name = "caseStatusPtr";
  m.functions.push_back(fn("caseSendNbx", sp, false));
  return m;
}

const char* kStatusPointer =
    "[conventions]\nstatus_pointer = { type = \"caseStatusPtr\", first_error = \"CASE_ERR_LAST\", "
    "pending = \"CASE_OK\" }\n";

TEST(MarkStatusPointers, AFunctionReturningTheTypeReturnsItsStatusAndRequest) {
  Model m = model_with_status_pointer();
  cubind::passes::mark_status_pointers(m, spec_with(kStatusPointer));
  const Function& f = m.functions[3];
  EXPECT_EQ(f.status_pointer_enum, "caseResult");
  EXPECT_EQ(f.status_pointer_first_error, -100);
  EXPECT_EQ(f.status_pointer_pending, 1);
  EXPECT_TRUE(f.value_only);  // no success member before the pair
  EXPECT_EQ(m.functions[1].status_pointer_enum, "");  // another pointer result: bytes, as before
  Model none = model_with_status_pointer();
  cubind::passes::mark_status_pointers(none, spec_with(""));
  EXPECT_EQ(none.functions[3].status_pointer_enum, "");
}

TEST(MarkStatusPointers, AMemberTheStatusLacksOrATypeNoFunctionReturnsFailsTheGeneration) {
  Model m = model_with_status_pointer();
  EXPECT_THROW(cubind::passes::mark_status_pointers(
                   m, spec_with("[conventions]\nstatus_pointer = { type = \"caseStatusPtr\", first_error = "
                                "\"CASE_NOPE\", pending = \"CASE_OK\" }\n")),
               std::runtime_error);
  Model other = model_with_status_pointer();
  other.functions.pop_back();
  EXPECT_THROW(cubind::passes::mark_status_pointers(other, spec_with(kStatusPointer)), std::runtime_error);
}

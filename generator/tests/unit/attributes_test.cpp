// passes::resolve_attribute_types and link_attributes: the spec's attribute
// value types resolved against the model, and the parameters linked to them.
#include <gtest/gtest.h>

#include "model/model.hpp"
#include "passes/passes.hpp"
#include "spec/spec.hpp"
#include "unit/builders.hpp"

namespace {

using namespace builders;
namespace passes = cubind::passes;

Model attribute_model() {
  Model m;
  Enum attr;
  attr.name = "caseAttr";
  attr.values = {{"CASE_ATTR_B", 2, {}}, {"CASE_ATTR_A", 1, {}}, {"CASE_ATTR_C", 3, {}}};
  m.enums.push_back(attr);
  Handle h;
  h.name = "caseCtx";
  m.handles.push_back(h);
  Typedef u64;
  u64.name = "caseU64";
  u64.type = builtin(TypeKind::Integer, "unsigned long long", false, 8);
  m.typedefs.push_back(u64);
  Function get = fn("caseGet", {param("data", ptr(void_t())), param("attribute", enum_t("caseAttr"))});
  get.params[0].role = Role::AttributeOut;
  get.params[0].attribute_param = "attribute";
  m.functions.push_back(get);
  return m;
}

cubind::spec::Spec spec_with(std::vector<cubind::spec::AttributeType> types) {
  cubind::spec::Spec s;
  s.attribute_types = std::move(types);
  return s;
}

TEST(AttributeTypes, ResolveHandlesTypedefsBuiltinsAndArraysInTheEnumsOrder) {
  Model m = attribute_model();
  passes::resolve_attribute_types(m, spec_with({{"caseAttr", "CASE_ATTR_C", "int[]"},
                                                {"caseAttr", "CASE_ATTR_A", "caseCtx"},
                                                {"caseAttr", "CASE_ATTR_B", "caseU64"}}));
  ASSERT_EQ(m.attribute_tables.size(), 1u);
  const auto& v = m.attribute_tables[0].values;
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].member, "CASE_ATTR_A");
  EXPECT_EQ(v[0].type.kind, TypeKind::Handle);
  EXPECT_EQ(v[1].member, "CASE_ATTR_B");
  EXPECT_EQ(v[1].type.name, "caseU64");
  EXPECT_EQ(v[1].type.size, 8);
  EXPECT_EQ(v[2].value, 3);
  EXPECT_TRUE(v[2].is_array);
  EXPECT_EQ(v[2].type.canonical, "int");
}

TEST(AttributeTypes, UnknownEnumsMembersAndTypesAreErrors) {
  Model m = attribute_model();
  EXPECT_THROW(passes::resolve_attribute_types(m, spec_with({{"caseNope", "CASE_ATTR_A", "int"}})), std::runtime_error);
  EXPECT_THROW(passes::resolve_attribute_types(m, spec_with({{"caseAttr", "CASE_ATTR_Z", "int"}})), std::runtime_error);
  EXPECT_THROW(passes::resolve_attribute_types(m, spec_with({{"caseAttr", "CASE_ATTR_A", "caseNope"}})),
               std::runtime_error);
}

TEST(AttributeTypes, ParametersLinkToTheirTableAndConvertThroughIt) {
  Model m = attribute_model();
  passes::resolve_attribute_types(m, spec_with({{"caseAttr", "CASE_ATTR_A", "caseCtx"},
                                                {"caseAttr", "CASE_ATTR_B", "void*"}}));
  passes::link_attributes(m);
  m.functions[0].returns_status = true;
  passes::assign_conversions(m);
  const Param& data = m.functions[0].params[0];
  EXPECT_EQ(data.direction, Direction::Out);
  EXPECT_EQ(data.conversion.name, "params/attribute_out");
  EXPECT_EQ(data.conversion.attribute_enum, "caseAttr");
  EXPECT_FALSE(data.conversion.input);
  EXPECT_TRUE(data.conversion.output);
  const auto& values = m.attribute_tables[0].values;
  EXPECT_EQ(values[0].out.name, "params/out_element_handle");
  EXPECT_EQ(values[0].in.name, "params/element_handle");
  EXPECT_EQ(values[1].out.name, "params/out_element_address");
  EXPECT_FALSE(values[1].in.bound());  // an address cannot be kept alive past the call
}

TEST(AttributeTypes, AParameterWhoseAttributeHasNoTableIsSkippedWithAReason) {
  Model m = attribute_model();
  passes::link_attributes(m);
  EXPECT_EQ(m.functions[0].params[0].role, Role::Unresolved);
  EXPECT_NE(m.functions[0].params[0].skip_reason.find("attribute_types"), std::string::npos);
}

}  // namespace

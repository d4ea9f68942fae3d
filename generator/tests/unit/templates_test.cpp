// emit::Templates: the contract between views and templates, and the log of
// fragments the golden cases compare.
#include "emit/templates.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "emit/context.hpp"
#include "emit/conversion_view.hpp"
#include "model/model.hpp"
#include "spec/spec.hpp"

namespace {

using cubind::emit::Context;
using cubind::emit::Shape;
using cubind::emit::Templates;
using cubind::emit::View;

class TemplatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cubind_templates_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / (name + ".mustache")) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(TemplatesTest, RendersKeysFromTheViewAndItsParents) {
  write("t", "{{a}} {{b}}{{#flag}}!{{/flag}}");
  Templates t(dir_.string());
  View parent;
  parent.set("b", "parent");
  View view;
  view.set("a", "view");
  EXPECT_EQ(t.render("t", view, {&parent}), "view parent");
}

TEST_F(TemplatesTest, AKeyNoViewProvidesIsAnError) {
  write("t", "{{a}} {{missing}}");
  Templates t(dir_.string());
  View view;
  view.set("a", "x");
  try {
    t.render("t", view);
    FAIL() << "rendered a key no view provides";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "template t renders keys no view provides: missing");
  }
}

TEST_F(TemplatesTest, APartialRendersInItsIncludersContext) {
  std::filesystem::create_directories(dir_ / "partials");
  write("partials/shared", "[{{a}}{{#opt}}+{{/opt}}]");
  write("one", "1{{> shared}}");
  write("two", "2{{> shared}}");
  Templates t(dir_.string());
  View view;
  view.set("a", "x");
  // The partial's section `opt` is absent, not missing: false.
  EXPECT_EQ(t.render("one", view), "1[x]");
  EXPECT_EQ(t.render("two", view), "2[x]");
  EXPECT_TRUE(t.defines("one", "opt"));
  EXPECT_TRUE(t.unused_keys().empty());
}

TEST_F(TemplatesTest, AbsentSectionsAreFalse) {
  write("t", "{{#opt}}{{opt}}{{/opt}}{{^opt}}none{{/opt}}");
  Templates t(dir_.string());
  EXPECT_EQ(t.render("t", View()), "none");
}

TEST_F(TemplatesTest, ViewKeysNoTemplateUsesAreReported) {
  write("t", "{{a}}");
  Templates t(dir_.string());
  View view;
  view.set("a", "x").set("stray", "y");
  t.render("t", view);
  EXPECT_EQ(t.unused_keys(), std::set<std::string>{"stray"});
}

TEST_F(TemplatesTest, FragmentsAreShapedAndLoggedAsReferences) {
  write("inner", "\n  value  \n");
  write("outer", "[{{#x}}{{text}}{{/x}}]");
  Templates t(dir_.string());
  t.keep_log(true);
  View outer;
  outer.set("x", t.fragment("inner", View(), Shape::Inline, "f.x"));
  EXPECT_EQ(t.render("outer", outer), "[value]");
  // A change of inner.mustache changes only inner's log.
  EXPECT_EQ(t.log().at("outer"), "## outer\n[<<inner: f.x>>]\n");
  EXPECT_EQ(t.log().at("inner"), "## f.x\nvalue\n");
}

TEST_F(TemplatesTest, DefinesNamesATemplatesSections) {
  write("t", "{{#get}}x{{/get}}{{^stub}}y{{/stub}}{{name}}");
  Templates t(dir_.string());
  EXPECT_TRUE(t.defines("t", "get"));
  EXPECT_TRUE(t.defines("t", "stub"));
  EXPECT_FALSE(t.defines("t", "name"));  // a variable, not a section
  EXPECT_FALSE(t.defines("t", "set"));
}

// An element fills the slots its template has, each as element_<slot>: a
// parameter's item converts `item`, a field's reads and writes in place.
TEST_F(TemplatesTest, AnElementIsRenderedInTheSlotsItsTemplateHas) {
  using namespace cubind::model;
  write("param_item", "{{#item}}in({{name}}){{/item}}{{#stub}}int{{/stub}}");
  write("field_item", "{{#get}}get({{name}}){{/get}}{{#set}}set{{/set}}{{#stub}}A{{/stub}}{{#stub_set}}B{{/stub_set}}");
  Templates t(dir_.string());
  Model m;
  m.library = "case";
  const cubind::spec::Spec spec;
  const Context ctx{m, spec, cubind::emit::TypeNames(m, ""), cubind::emit::TypeNames(m, "c."), t};
  auto text = [](const View& v, const std::string& key) {
    const auto* d = v.get(key);
    return d ? d->get("text")->string_value() : std::string("<none>");
  };
  Conversion param;
  param.name = "params/array";
  param.element.push_back(Conversion{});
  param.element.back().name = "param_item";
  const View pv = cubind::emit::conversion_view(param, "xs", ctx);
  EXPECT_EQ(text(pv, "element_item"), "in(xs)");
  EXPECT_EQ(text(pv, "element_stub"), "int");
  EXPECT_EQ(text(pv, "element_get"), "<none>");
  Conversion field = param;
  field.element.back().name = "field_item";
  const View fv = cubind::emit::conversion_view(field, "dims", ctx);
  EXPECT_EQ(text(fv, "element_get"), "get(dims)");
  EXPECT_EQ(text(fv, "element_set"), "set");
  EXPECT_EQ(text(fv, "element_stub"), "A");
  EXPECT_EQ(text(fv, "element_stub_set"), "B");
  EXPECT_EQ(text(fv, "element_item"), "<none>");
}

// A parameter's view reads its role facts from the Param, where they are
// stored once: the count (with its offset), the attribute array's count, the
// user data.
TEST_F(TemplatesTest, AParameterViewReadsTheParamsRoleFacts) {
  using namespace cubind::model;
  Templates t(dir_.string());
  Model m;
  const cubind::spec::Spec spec;
  const Context ctx{m, spec, cubind::emit::TypeNames(m, ""), cubind::emit::TypeNames(m, "c."), t};
  Function f;
  f.name = "caseF";
  Param rank;
  rank.name = rank.py_name = "rank";
  Param user;
  user.name = "lambda";
  user.py_name = "lambda_";  // passes::name_python's name for a keyword
  Param dims;
  dims.name = dims.py_name = "dims";
  dims.count_param = "rank";
  dims.count_offset = -1;
  dims.conversion.name = "params/array";
  Param cb;
  cb.name = cb.py_name = "fn";
  cb.userdata_param = "lambda";  // read under its Python name
  cb.conversion.name = "params/in_callback";
  f.params = {rank, dims, cb, user};
  const View dv = cubind::emit::param_view(f, f.params[1], ctx);
  EXPECT_EQ(dv.get("count")->string_value(), "rank");
  EXPECT_EQ(dv.get("count_cname")->string_value(), "_c_rank");
  EXPECT_EQ(dv.get("offset_op")->string_value(), "-");
  EXPECT_EQ(dv.get("offset_amount")->string_value(), "1");
  EXPECT_EQ(dv.get("userdata"), nullptr);
  const View cv = cubind::emit::param_view(f, f.params[2], ctx);
  EXPECT_EQ(cv.get("count"), nullptr);
  EXPECT_EQ(cv.get("userdata")->string_value(), "lambda_");
  EXPECT_EQ(cv.get("userdata_cname")->string_value(), "_c_lambda_");
}

}  // namespace

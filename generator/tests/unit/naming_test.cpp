// passes/naming.cpp's name_python: the names Python and Cython code spell,
// decided once and stored on the model, which emit only reads.
#include <gtest/gtest.h>

#include <algorithm>

#include "model/model.hpp"
#include "passes/passes.hpp"
#include "unit/builders.hpp"

namespace {

using namespace builders;
namespace passes = cubind::passes;

TEST(NamePython, KeywordsAndCythonNamesGetAnUnderscore) {
  EXPECT_EQ(passes::python_name("from"), "from_");  // a Python keyword
  EXPECT_EQ(passes::python_name("lambda"), "lambda_");
  EXPECT_EQ(passes::python_name("bytes"), "bytes_");  // a Cython type name
  EXPECT_EQ(passes::python_name("cdef"), "cdef_");    // a Cython keyword
  EXPECT_EQ(passes::python_name("count"), "count");
  EXPECT_EQ(passes::python_name("From"), "From");  // case matters
}

TEST(NamePython, ParamsAndFieldsStoreTheirNames) {
  Model m;
  Param from = param("from", int_t());
  from.py_name.clear();
  m.functions.push_back(fn("caseCopy", {from, param("size", int_t())}));
  Record r;
  r.name = "caseUuid";
  Field bytes, in, anonymous, plain;
  bytes.name = "bytes";
  in.name = "in";
  plain.name = "value";
  r.fields = {bytes, in, anonymous, plain};
  m.records.push_back(r);
  passes::name_python(m);
  EXPECT_EQ(m.functions[0].params[0].py_name, "from_");
  EXPECT_EQ(m.functions[0].params[1].py_name, "size");
  const auto& fields = m.records[0].fields;
  EXPECT_EQ(fields[0].py_name, "bytes_");
  EXPECT_EQ(fields[0].py_alias, "bytes");  // uuid.bytes still works, as in the classic bindings
  EXPECT_EQ(fields[1].py_name, "in_");
  EXPECT_EQ(fields[1].py_alias, "");  // Python cannot spell uuid.in
  EXPECT_EQ(fields[2].py_name, "");   // an anonymous member has no property
  EXPECT_EQ(fields[3].py_name, "value");
  EXPECT_EQ(fields[3].py_alias, "");
}

TEST(NamePython, RunsAfterEveryPassThatAddsAName) {
  const std::vector<std::string> order = passes::pass_names();
  const auto at = [&](const std::string& name) { return std::find(order.begin(), order.end(), name) - order.begin(); };
  EXPECT_LT(at("name_python"), static_cast<long>(order.size()));
  EXPECT_GT(at("name_python"), at("merge_abi_symbols"));
  EXPECT_GT(at("name_python"), at("apply_aliases"));
  EXPECT_LT(at("name_python"), at("assign_conversions"));
}

// The classic modules' `CUoccupancyB2DSize(address)`: a class per
// function-pointer typedef, unless the module's name is already another's.
TEST(MarkCallbackClasses, EveryTypedefWhoseNameIsFree) {
  Model m;
  Callback free_name, record_name, function_name;
  free_name.name = "caseHostFn";
  record_name.name = "caseNode";
  function_name.name = "caseLaunch";
  m.callbacks = {free_name, record_name, function_name};
  Record r;
  r.name = "caseNode_st";
  r.public_name = "caseNode_st";
  r.aliases = {"caseNode"};  // a struct's other typedef: the class answers to it too
  m.records.push_back(r);
  m.functions.push_back(fn("caseLaunch", {}));
  passes::mark_callback_classes(m);
  EXPECT_TRUE(m.callbacks[0].has_class);
  EXPECT_EQ(m.callbacks[0].no_class_reason, "");
  EXPECT_FALSE(m.callbacks[1].has_class);
  EXPECT_EQ(m.callbacks[1].no_class_reason, "the name is the module's struct caseNode_st");
  EXPECT_FALSE(m.callbacks[2].has_class);
  EXPECT_EQ(m.callbacks[2].no_class_reason, "the name is the module's function caseLaunch");
}

TEST(MarkCallbackClasses, RunsBeforeTheConversionsThatNameTheClass) {
  const std::vector<std::string> order = passes::pass_names();
  const auto at = [&](const std::string& name) { return std::find(order.begin(), order.end(), name) - order.begin(); };
  EXPECT_LT(at("mark_callback_classes"), at("assign_conversions"));
  EXPECT_GT(at("mark_callback_classes"), at("name_public_records"));
  EXPECT_GT(at("mark_callback_classes"), at("mark_integer_handles"));
}

}  // namespace

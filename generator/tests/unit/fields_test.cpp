// passes::mark_hex_fields: the fields a struct's repr prints in hex, as
// NVIDIA's classic modules print them.
#include <gtest/gtest.h>

#include <algorithm>

#include "model/model.hpp"
#include "passes/passes.hpp"
#include "unit/builders.hpp"

namespace {

using namespace builders;
namespace passes = cubind::passes;

Field field(const std::string& name, const Type& type) {
  Field f;
  f.name = name;
  f.type = type;
  return f;
}

Type array_of(const Type& e, int64_t count) {
  Type t;
  t.kind = TypeKind::Array;
  t.count = count;
  t.inner.push_back(e);
  return t;
}

bool hex_of(const Type& t) {
  Model m;
  Record r;
  r.name = "caseAll";
  r.fields.push_back(field("f", t));
  m.records.push_back(r);
  passes::mark_hex_fields(m);
  return m.records[0].fields[0].prints_hex;
}

// cuda.h's `void *fence` prints `fence : 0x0`; `const void *name` too.
TEST(MarkHexFields, VoidPointersPrintInHex) {
  EXPECT_TRUE(hex_of(ptr(void_t())));
  EXPECT_TRUE(hex_of(ptr(void_t(true))));
  // CUeglFrame's `void* pPitch[3]`: each item (NVIDIA's hex() of the list raises).
  EXPECT_TRUE(hex_of(array_of(ptr(void_t()), 3)));
}

// What NVIDIA prints as its value: kernelParams' `void **`, a pointer to a
// struct (CUlaunchConfig.attrs) or to a handle, a function pointer, a
// handle (a typedef of void* the spec binds as one), an integer.
TEST(MarkHexFields, OtherFieldsPrintAsTheirValue) {
  EXPECT_FALSE(hex_of(ptr(ptr(void_t()))));
  EXPECT_FALSE(hex_of(ptr(record_t())));
  EXPECT_FALSE(hex_of(ptr(handle_t())));
  EXPECT_FALSE(hex_of(ptr(char_t(true))));
  EXPECT_FALSE(hex_of(callback_t()));
  EXPECT_FALSE(hex_of(handle_t()));
  EXPECT_FALSE(hex_of(int_t()));
  EXPECT_FALSE(hex_of(array_of(int_t(), 3)));
}

// A typedef of void* the spec binds as a handle (EGLImageKHR) is a handle by then.
TEST(MarkHexFields, RunsAfterVoidHandlesAndBeforeTheConversions) {
  const std::vector<std::string> order = passes::pass_names();
  const auto at = [&](const std::string& name) { return std::find(order.begin(), order.end(), name) - order.begin(); };
  EXPECT_LT(at("mark_hex_fields"), static_cast<long>(order.size()));
  EXPECT_GT(at("mark_hex_fields"), at("mark_void_handles"));
  EXPECT_LT(at("mark_hex_fields"), at("assign_conversions"));
}

}  // namespace

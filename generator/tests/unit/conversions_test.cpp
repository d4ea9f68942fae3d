// passes::assign_conversions: the template and typed facts chosen for every
// parameter, result, field, callback argument and integer handle.
#include <gtest/gtest.h>

#include "model/model.hpp"
#include "passes/passes.hpp"
#include "spec/spec.hpp"
#include "unit/builders.hpp"

namespace {

using namespace builders;
namespace passes = cubind::passes;

// A model with the status enum and one record, as the passes see it.
Model model_with(std::vector<Function> functions) {
  Model m;
  m.library = "case";
  m.headers = {"case.h"};
  Enum status;
  status.name = "caseResult";
  status.values = {{"CASE_SUCCESS", 0, {}}, {"CASE_ERROR_LAST", 999, {}}, {"CASE_ERROR_MID", 5, {}}};
  m.enums.push_back(status);
  Enum mode;
  mode.name = "caseMode";
  mode.is_signed = false;
  mode.values = {{"CASE_MODE_A", 0, {}}};
  m.enums.push_back(mode);
  Record r;
  r.name = "caseRecord_v2";
  r.public_name = "caseRecord";
  m.records.push_back(r);
  m.functions = std::move(functions);
  return m;
}

Type record_v2() { return named(TypeKind::Record, "caseRecord_v2", 16); }

const Conversion& conv(const Model& m, const std::string& function, const std::string& param) {
  for (const auto& p : m.function(function)->params)
    if (p.name == param) return p.conversion;
  throw std::runtime_error("no parameter " + param);
}

Model convert(std::vector<Function> functions) {
  Model m = model_with(std::move(functions));
  passes::mark_failure_members(m, cubind::spec::Spec{});
  passes::assign_conversions(m);
  return m;
}

Function with_roles(Function f, std::vector<Role> roles) {
  for (size_t i = 0; i < roles.size(); ++i) f.params[i].role = roles[i];
  f.returns_status = true;
  return f;
}

TEST(AssignConversions, ScalarsByTypeAndRange) {
  const Model m = convert({with_roles(fn("caseF", {param("n", int_t()), param("x", float_t()),
                                                    param("mode", named(TypeKind::Enum, "caseMode", 4)),
                                                    param("size", size_t_t())}),
                                      {Role::Scalar, Role::Scalar, Role::Enum, Role::Count})});
  EXPECT_EQ(conv(m, "caseF", "n").name, "params/in_integer");
  EXPECT_EQ(conv(m, "caseF", "n").range.bits, 32);
  EXPECT_TRUE(conv(m, "caseF", "n").range.is_signed);
  EXPECT_EQ(conv(m, "caseF", "x").name, "params/in_float");
  EXPECT_EQ(conv(m, "caseF", "x").range.bits, 0);
  // An enum converts as an integer of the enum's own signedness, checking
  // that a member given is one of its own class.
  EXPECT_EQ(conv(m, "caseF", "mode").name, "params/in_enum");
  EXPECT_EQ(conv(m, "caseF", "mode").c_type.canonical, "caseMode");
  EXPECT_FALSE(conv(m, "caseF", "mode").range.is_signed);
  EXPECT_EQ(conv(m, "caseF", "size").range.bits, 64);
  EXPECT_FALSE(conv(m, "caseF", "size").range.is_signed);
}

TEST(AssignConversions, AnEnumRoleOnANonEnumTypeStaysAnInteger) {
  // The spec may give an int parameter the enum role: no enum class to check.
  const Model m = convert({with_roles(fn("caseF", {param("flags", int_t())}), {Role::Enum})});
  EXPECT_EQ(conv(m, "caseF", "flags").name, "params/in_integer");
}

TEST(AssignConversions, OutputsAreNotInputs) {
  Function f = with_roles(fn("caseOut", {param("value", ptr(int_t())), param("x", ptr(float_t())),
                                         param("h", ptr(handle_t())), param("rec", ptr(record_v2())),
                                         param("addr", ptr(ptr(void_t()))), param("mode", ptr(enum_t("caseMode")))}),
                          {Role::OutScalar, Role::OutScalar, Role::OutScalar, Role::RecordOut, Role::OutAddress,
                           Role::OutScalar});
  f.params[5].type.inner[0].canonical = "caseMode";
  const Model m = convert({f});
  for (const char* p : {"value", "x", "h", "rec", "addr", "mode"}) {
    EXPECT_FALSE(conv(m, "caseOut", p).input) << p;
    EXPECT_TRUE(conv(m, "caseOut", p).output) << p;
  }
  EXPECT_EQ(conv(m, "caseOut", "value").name, "params/out_value");
  EXPECT_EQ(conv(m, "caseOut", "x").name, "params/out_float");
  EXPECT_EQ(conv(m, "caseOut", "h").name, "params/out_handle");
  EXPECT_EQ(conv(m, "caseOut", "h").handle, "caseHandle");
  EXPECT_EQ(conv(m, "caseOut", "h").ownership, Ownership::Returned);
  EXPECT_EQ(conv(m, "caseOut", "rec").name, "params/record_out");
  // The class users see, not the versioned C name.
  EXPECT_EQ(conv(m, "caseOut", "rec").record_class, "caseRecord");
  EXPECT_EQ(conv(m, "caseOut", "addr").name, "params/out_address");
  EXPECT_EQ(conv(m, "caseOut", "mode").name, "params/out_enum");
  EXPECT_EQ(conv(m, "caseOut", "mode").enum_name, "caseMode");
}

TEST(AssignConversions, AHandleTakingAnotherClassNamesBoth) {
  Function f = with_roles(fn("caseLaunch", {param("f", handle_t("caseFunction")), param("g", handle_t("caseFunction"))}),
                          {Role::Handle, Role::Handle});
  f.params[0].also_accepts = "caseKernel";  // accept_documented_casts decided it
  const Model m = convert({f});
  EXPECT_EQ(conv(m, "caseLaunch", "f").name, "params/in_handle_or");
  EXPECT_EQ(conv(m, "caseLaunch", "f").handle, "caseFunction");
  EXPECT_EQ(conv(m, "caseLaunch", "f").also_handle, "caseKernel");
  EXPECT_EQ(conv(m, "caseLaunch", "g").name, "params/in_handle");
  EXPECT_EQ(conv(m, "caseLaunch", "g").also_handle, "");
}

// The Param's role facts (count_param, count_offset, query_function,
// userdata_param, attribute_param) stay on the Param: a conversion holds only
// what it derives from them (its template, query_args, the element...).
TEST(AssignConversions, ArraysCarryTheirElement) {
  Function f = with_roles(fn("caseArrays", {param("rank", int_t()), param("dims", ptr(size_t_t(), false)),
                                            param("handles", ptr(handle_t())), param("recs", ptr(record_v2())),
                                            param("values", ptr(ptr(void_t()))), param("modes", ptr(enum_t("caseMode")))}),
                          {Role::Count, Role::Array, Role::Array, Role::Array, Role::Array, Role::Array});
  for (size_t i = 1; i < f.params.size(); ++i) f.params[i].count_param = "rank";
  f.params[1].count_offset = -1;
  f.params[1].type.inner[0].is_const = true;
  const Model m = convert({f});
  const Conversion& dims = conv(m, "caseArrays", "dims");
  EXPECT_EQ(dims.name, "params/array");
  EXPECT_TRUE(dims.late);
  EXPECT_FALSE(dims.c_type.is_const);  // storage the binding fills
  ASSERT_EQ(dims.element.size(), 1u);
  EXPECT_EQ(dims.element[0].name, "params/element_integer");
  EXPECT_EQ(dims.element[0].range.bits, 64);
  EXPECT_EQ(conv(m, "caseArrays", "handles").element[0].name, "params/element_handle");
  EXPECT_EQ(conv(m, "caseArrays", "recs").element[0].name, "params/element_record");
  EXPECT_EQ(conv(m, "caseArrays", "recs").element[0].record_class, "caseRecord");
  EXPECT_EQ(conv(m, "caseArrays", "values").element[0].name, "params/element_address");
  EXPECT_EQ(conv(m, "caseArrays", "values").element[0].ownership, Ownership::Call);
  // Enum items refuse members of another enum class, as enum parameters do.
  EXPECT_EQ(conv(m, "caseArrays", "modes").element[0].name, "params/element_enum");
  EXPECT_EQ(conv(m, "caseArrays", "modes").element[0].c_type.canonical, "caseMode");
}

TEST(AssignConversions, QueriesNameTheirArguments) {
  Function size = fn("caseGetLogSize", {param("h", handle_t()), param("size", ptr(size_t_t()))});
  Function count = fn("caseGetNumArchs", {param("n", ptr(int_t()))});
  Function log = with_roles(fn("caseGetLog", {param("h", handle_t()), param("log", ptr(char_t()))}),
                            {Role::Handle, Role::Buffer});
  log.params[1].query_function = "caseGetLogSize";
  log.params[1].direction = Direction::Out;  // mark_written_buffers
  Function archs = with_roles(fn("caseGetArchs", {param("archs", ptr(int_t()))}), {Role::OutArray});
  archs.params[0].query_function = "caseGetNumArchs";
  size.skip_reason = count.skip_reason = "not under test";
  const Model m = convert({size, count, log, archs});
  const Conversion& buffer = conv(m, "caseGetLog", "log");
  EXPECT_EQ(buffer.name, "params/into_buffer_queried");
  EXPECT_TRUE(buffer.c_string);  // a char*: the call writes a NUL-terminated string
  EXPECT_EQ(buffer.query_args, std::vector<std::string>{"h"});
  EXPECT_EQ(buffer.query_result.kind, TypeKind::Unknown);  // always a size_t
  const Conversion& out = conv(m, "caseGetArchs", "archs");
  EXPECT_EQ(out.name, "params/out_array");
  EXPECT_TRUE(out.query_args.empty());
  EXPECT_EQ(out.query_result.canonical, "int");
}

TEST(AssignConversions, VoidPointersCheckTheBytesTheirSizeGives) {
  Function size = fn("caseGetImageSize", {param("h", handle_t()), param("size", ptr(size_t_t()))});
  size.skip_reason = "not under test";
  Function image = with_roles(fn("caseGetImage", {param("h", handle_t()), param("image", ptr(void_t()))}),
                              {Role::Handle, Role::VoidPtr});
  image.params[1].query_function = "caseGetImageSize";
  Function copy = with_roles(fn("caseCopy", {param("dst", ptr(void_t())), param("src", ptr(void_t(true))),
                                             param("count", size_t_t())}),
                             {Role::VoidPtr, Role::VoidPtr, Role::Scalar});
  copy.params[0].count_param = copy.params[1].count_param = "count";
  Function load = with_roles(fn("caseLoad", {param("image", ptr(void_t(true)))}), {Role::VoidPtr});
  const Model m = convert({size, image, copy, load});

  const Conversion& queried = conv(m, "caseGetImage", "image");
  EXPECT_EQ(queried.name, "params/in_voidptr_queried");
  EXPECT_EQ(queried.query_args, std::vector<std::string>{"h"});
  EXPECT_TRUE(queried.late);  // the query reads h's C value
  EXPECT_TRUE(queried.input);
  EXPECT_FALSE(queried.output);
  for (const char* side : {"dst", "src"}) {
    const Conversion& sized = conv(m, "caseCopy", side);
    EXPECT_EQ(sized.name, "params/in_voidptr_sized") << side;
    EXPECT_TRUE(sized.late) << side;  // reads count's C value
    EXPECT_EQ(sized.ownership, Ownership::Call) << side;
  }
  // Without a size the int-or-buffer conversion stays as it was.
  const Conversion& plain = conv(m, "caseLoad", "image");
  EXPECT_EQ(plain.name, "params/in_voidptr");
  EXPECT_FALSE(plain.late);
}

TEST(AssignConversions, CharsReadForTheirLengthAreASizedBufferNotAString) {
  // nvvmAddModuleToProgram(prog, buffer, size, name) as infer_parameters
  // leaves it: the buffer a VoidPtr counted by `size`, the name a String.
  Function add = with_roles(fn("caseAddModule", {param("prog", handle_t()), param("buffer", ptr(char_t(true))),
                                                 param("size", size_t_t()), param("name", ptr(char_t(true)))}),
                            {Role::Handle, Role::VoidPtr, Role::Scalar, Role::String});
  add.params[1].count_param = "size";
  const Model m = convert({add});
  const Conversion& buffer = conv(m, "caseAddModule", "buffer");
  EXPECT_EQ(buffer.name, "params/in_chars_sized");  // the buffer check, its address cast to const char*
  EXPECT_TRUE(buffer.late);                         // reads size's C value
  EXPECT_EQ(buffer.ownership, Ownership::Call);     // the buffer is held for the call
  EXPECT_FALSE(buffer.c_string);                    // read, not written
  EXPECT_EQ(conv(m, "caseAddModule", "name").name, "params/in_string");
}

TEST(AssignConversions, BuffersTheCallWritesTakeOneConversionWhateverTheirCType) {
  // nvrtcGetPTX's char* and nvJitLinkGetLinkedCubin's void* (both with a
  // size query), cuMemcpyDtoH's dstHost (a byte count): written, whatever
  // the library, so one conversion each for a query and a count.
  Function size = fn("caseGetLogSize", {param("h", handle_t()), param("size", ptr(size_t_t()))});
  size.skip_reason = "not under test";
  Function log = with_roles(fn("caseGetLog", {param("h", handle_t()), param("log", ptr(char_t()))}),
                            {Role::Handle, Role::Buffer});
  Function image = with_roles(fn("caseGetImage", {param("h", handle_t()), param("image", ptr(void_t()))}),
                              {Role::Handle, Role::VoidPtr});
  log.params[1].query_function = image.params[1].query_function = "caseGetLogSize";
  Function copy = with_roles(fn("caseCopy", {param("dst", ptr(void_t())), param("src", ptr(void_t(true))),
                                             param("count", size_t_t())}),
                             {Role::VoidPtr, Role::VoidPtr, Role::Scalar});
  copy.params[0].count_param = copy.params[1].count_param = "count";
  log.params[1].direction = image.params[1].direction = copy.params[0].direction = Direction::Out;
  const Model m = convert({size, log, image, copy});
  for (const char* f : {"caseGetLog", "caseGetImage"}) {
    const Conversion& c = conv(m, f, f == std::string("caseGetLog") ? "log" : "image");
    EXPECT_EQ(c.name, "params/into_buffer_queried") << f;
    EXPECT_EQ(c.query_args, std::vector<std::string>{"h"}) << f;
    EXPECT_TRUE(c.late) << f;
    EXPECT_TRUE(c.input) << f;  // the caller's buffer: taken, not returned
    EXPECT_FALSE(c.output) << f;
    EXPECT_EQ(c.ownership, Ownership::Call) << f;  // held for the call
  }
  EXPECT_TRUE(conv(m, "caseGetLog", "log").c_string);
  EXPECT_FALSE(conv(m, "caseGetImage", "image").c_string);  // a void*: bytes, not a string
  EXPECT_EQ(conv(m, "caseCopy", "dst").name, "params/into_buffer_sized");
  EXPECT_FALSE(conv(m, "caseCopy", "dst").c_string);
  EXPECT_EQ(conv(m, "caseCopy", "src").name, "params/in_voidptr_sized");  // read: any buffer
}

TEST(AssignConversions, InOutArraysAndTheirCount) {
  Function f = with_roles(fn("caseGetNodes", {param("nodes", ptr(handle_t())), param("recs", ptr(record_v2())),
                                              param("numNodes", ptr(size_t_t()))}),
                          {Role::InOutArray, Role::InOutArray, Role::InOutCount});
  f.params[0].count_param = f.params[1].count_param = "numNodes";
  const Model m = convert({f});
  const Conversion& count = conv(m, "caseGetNodes", "numNodes");
  EXPECT_EQ(count.name, "params/inout_count");
  EXPECT_TRUE(count.input && count.output);  // a capacity in, the count out
  EXPECT_EQ(count.range.bits, 64);
  const Conversion& nodes = conv(m, "caseGetNodes", "nodes");
  EXPECT_EQ(nodes.name, "params/inout_array");
  EXPECT_FALSE(nodes.input);
  EXPECT_TRUE(nodes.output && nodes.late);
  EXPECT_EQ(nodes.element.at(0).name, "params/out_element_handle");
  EXPECT_EQ(conv(m, "caseGetNodes", "recs").element.at(0).name, "params/out_element_record");
}

TEST(AssignConversions, CallbacksConvertEachArgument) {
  const Type cb = callback_t("", {handle_t(), ptr(void_t()), enum_t("caseMode"), int_t()});
  Function f = with_roles(fn("caseLaunchHost", {param("fn", cb), param("userData", ptr(void_t()))}),
                          {Role::Callback, Role::UserData});
  f.params[0].userdata_param = "userData";
  f.params[0].called_once = true;
  f.params[0].type.inner[3].canonical = "caseMode";
  Function raw = with_roles(fn("caseSetRaw", {param("fn", callback_t("caseRaw_t", {int_t()}))}), {Role::Callback});
  const Model m = convert({f, raw});
  const Conversion& c = conv(m, "caseLaunchHost", "fn");
  EXPECT_EQ(c.name, "params/in_callback");
  EXPECT_EQ(c.callback_type, "caseLaunchHost_fn_t");  // the C layer's typedef of the unnamed type
  EXPECT_EQ(c.ownership, Ownership::Once);
  ASSERT_EQ(c.arguments.size(), 4u);
  EXPECT_EQ(c.arguments[0].name, "callback_args/handle");
  EXPECT_EQ(c.arguments[1].name, "callback_args/userdata");
  EXPECT_EQ(c.arguments[2].name, "callback_args/enum");
  EXPECT_EQ(c.arguments[3].name, "callback_args/value");
  EXPECT_EQ(c.userdata_argument, 1);  // emit boxes this argument, by index, not by template name
  const Conversion& r = conv(m, "caseSetRaw", "fn");
  EXPECT_EQ(r.name, "params/in_callback_raw");
  EXPECT_EQ(r.callback_type, "caseRaw_t");
  EXPECT_TRUE(r.arguments.empty());
  EXPECT_EQ(r.userdata_argument, -1);
}

// A parameter or field of a typedef that has a class takes instances of it:
// the conversion names the class; an unnamed type, or one without a class,
// names none.
TEST(AssignConversions, CallbackClassesOfTheirTypedef) {
  Function classed = with_roles(fn("caseOccupancy", {param("b2d", callback_t("caseB2DSize", {int_t()}))}),
                                {Role::Callback});
  Function unclassed = with_roles(fn("caseOther", {param("fn", callback_t("caseTaken", {int_t()}))}), {Role::Callback});
  Function unnamed = with_roles(fn("caseSet", {param("fn", callback_t("", {int_t()}))}), {Role::Callback});
  Model m = model_with({classed, unclassed, unnamed});
  Callback b2d, taken;
  b2d.name = "caseB2DSize";
  b2d.has_class = true;
  taken.name = "caseTaken";
  m.callbacks = {b2d, taken};
  passes::assign_conversions(m);
  EXPECT_EQ(conv(m, "caseOccupancy", "b2d").callback_class, "caseB2DSize");
  EXPECT_EQ(conv(m, "caseOther", "fn").callback_class, "");
  EXPECT_EQ(conv(m, "caseSet", "fn").callback_class, "");
  Field field;
  field.name = "fn";
  field.type = callback_t("caseB2DSize", {int_t()});
  EXPECT_EQ(passes::field_conversion(field, m).callback_class, "caseB2DSize");
}

// What C is told when the Python callable raised: a status enum's failure
// (its largest member, as the C layer's), the spec's value, else 0.
TEST(AssignConversions, CallbackErrorReturnValues) {
  auto with_userdata = [](const std::string& name, Type cb) {
    Function f = with_roles(fn(name, {param("fn", cb), param("userData", ptr(void_t()))}),
                            {Role::Callback, Role::UserData});
    f.params[0].userdata_param = "userData";
    return f;
  };
  Type status_cb = callback_t("caseRecapture_t", {ptr(void_t())});
  status_cb.inner[0] = enum_t("caseResult");
  Type void_cb = callback_t("caseHost_t", {ptr(void_t())});
  void_cb.inner[0] = void_t();
  Function told = with_userdata("caseTold", callback_t("caseProgress_t", {ptr(void_t())}));
  told.params[0].on_error_return = "1";
  const Model m = convert({with_userdata("caseRecapture", status_cb), with_userdata("caseHost", void_cb),
                           with_userdata("caseProgress", callback_t("caseProgress_t", {ptr(void_t())})), told});
  EXPECT_EQ(conv(m, "caseRecapture", "fn").error_value, "999");  // CASE_ERROR_LAST
  EXPECT_EQ(conv(m, "caseHost", "fn").error_value, "");
  EXPECT_EQ(conv(m, "caseProgress", "fn").error_value, "0");
  EXPECT_EQ(conv(m, "caseTold", "fn").error_value, "1");
}

TEST(AssignConversions, ResultsAndTheirErrorValues) {
  Function status = fn("caseStatus", {});
  status.returns_status = true;
  Function text = fn("caseName", {});
  text.result = ptr(char_t(true));
  Function mode = fn("caseMode", {});
  mode.result = named(TypeKind::Enum, "caseMode", 4);
  Function nothing = fn("caseNothing", {});
  nothing.result = void_t();
  Function scale = fn("caseScale", {});
  scale.result = float_t();
  Function count = fn("caseCount", {});
  count.result = int_t();
  Function pair = fn("casePair", {});
  pair.result = record_v2();
  const Model m = convert({status, text, mode, nothing, scale, count, pair});
  auto result = [&](const char* f) { return m.function(f)->result_conversion; };
  EXPECT_EQ(result("caseStatus").name, "results/status");
  // The largest status, which C rarely returns.
  EXPECT_EQ(result("caseStatus").error_value, "CASE_ERROR_LAST");
  EXPECT_EQ(result("caseName").name, "results/bytes");
  EXPECT_EQ(result("caseName").error_value, "NULL");
  EXPECT_EQ(result("caseMode").name, "results/enum");
  EXPECT_EQ(result("caseMode").enum_name, "caseMode");
  EXPECT_EQ(result("caseNothing").name, "results/none");
  EXPECT_EQ(result("caseNothing").error_value, "");  // always check
  EXPECT_EQ(result("caseScale").name, "results/float");
  EXPECT_EQ(result("caseCount").name, "results/value");
  EXPECT_EQ(result("caseCount").error_value, "-1");
  // A struct by value: a new object holding a copy; no value means an error.
  EXPECT_EQ(result("casePair").name, "results/record");
  EXPECT_EQ(result("casePair").record_class, "caseRecord");
  EXPECT_EQ(result("casePair").error_value, "");
}

TEST(AssignConversions, HeaderOnlyResultsCannotRaise) {
  // Compiled in from the header: no library is loaded, so no loader error can
  // reach the caller (the C layer declares them noexcept).
  Function pos = fn("make_casePos", {});
  pos.result = record_v2();
  pos.header_only = true;
  Function twice = fn("caseTwice", {});
  twice.result = int_t();
  twice.header_only = true;
  Function count = fn("caseCount", {});
  count.result = int_t();
  const Model m = convert({pos, twice, count});
  auto result = [&](const char* f) { return m.function(f)->result_conversion; };
  EXPECT_FALSE(result("make_casePos").raises);
  EXPECT_EQ(result("make_casePos").error_value, "");
  EXPECT_FALSE(result("caseTwice").raises);
  EXPECT_EQ(result("caseTwice").error_value, "");
  EXPECT_TRUE(result("caseCount").raises);
  EXPECT_EQ(result("caseCount").error_value, "-1");
}

TEST(AssignConversions, SkippedFunctionsGetNone) {
  Function f = with_roles(fn("caseSkipped", {param("n", int_t())}), {Role::Scalar});
  f.skip_reason = "by the spec";
  const Model m = convert({f});
  EXPECT_FALSE(conv(m, "caseSkipped", "n").bound());
  EXPECT_FALSE(m.function("caseSkipped")->result_conversion.bound());
}

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
  t.spelling = e.spelling + "[" + std::to_string(count) + "]";
  return t;
}

TEST(AssignConversions, FieldsOfEachKind) {
  const Model m = model_with({});
  auto of = [&](const Type& t) { return passes::field_conversion(field("f", t), m); };
  EXPECT_EQ(of(int_t()).name, "fields/scalar");
  EXPECT_EQ(of(float_t()).name, "fields/float");
  EXPECT_EQ(of(named(TypeKind::Enum, "caseMode", 4)).name, "fields/enum");
  EXPECT_EQ(of(handle_t()).name, "fields/handle");
  EXPECT_EQ(of(record_v2()).name, "fields/record");
  EXPECT_EQ(of(record_v2()).record_class, "caseRecord");
  EXPECT_EQ(of(array_of(char_t(), 16)).name, "fields/chars");
  EXPECT_EQ(of(array_of(char_t(), 16)).fixed_count, 16);
  EXPECT_EQ(of(array_of(int_t(), 4)).name, "fields/array");
  EXPECT_EQ(of(ptr(record_v2())).name, "fields/record_pointer");
  EXPECT_EQ(of(ptr(record_v2())).ownership, Ownership::Struct);
  EXPECT_EQ(of(ptr(void_t())).name, "fields/address");
  EXPECT_EQ(of(callback_t()).name, "fields/address");
  // No template for an array of callbacks: a skip with its reason, not silence.
  const Conversion none = of(array_of(callback_t(), 3));
  EXPECT_FALSE(none.bound());
  EXPECT_EQ(none.skip_reason, "no conversion for a fixed array of function_pointer");
}

TEST(AssignConversions, AKernelParamsFieldIsPackedAndKeptByTheStruct) {
  const Model m = model_with({});
  Field f = field("kernelParams", ptr(ptr(void_t())));
  EXPECT_EQ(passes::field_conversion(f, m).name, "fields/address");
  f.kernel_params = true;  // apply_field_counts, from the spec's role
  const Conversion c = passes::field_conversion(f, m);
  EXPECT_EQ(c.name, "fields/kernel_params");
  EXPECT_EQ(c.ownership, Ownership::Struct);
}

TEST(AssignConversions, ACharArrayIsAllItsBytesOrAStringToItsFirstNul) {
  const Model m = model_with({});
  Field f = field("name", array_of(char_t(), 8));
  EXPECT_EQ(passes::field_conversion(f, m).name, "fields/chars");
  f.c_string = true;  // mark_char_strings / apply_field_counts, from the spec
  const Conversion c = passes::field_conversion(f, m);
  EXPECT_EQ(c.name, "fields/c_string");
  EXPECT_EQ(c.fixed_count, 8);
}

// A fixed array is one template, fields/array; what differs by element type
// (how item i is read and written in place, its stub types) is the element's.
TEST(AssignConversions, FixedArraysConvertEachItemThroughTheirElement) {
  const Model m = model_with({});
  auto of = [&](const Type& t) { return passes::field_conversion(field("f", t), m); };
  auto element = [&](const Type& t) {
    const Conversion c = of(t);
    EXPECT_EQ(c.name, "fields/array");
    EXPECT_EQ(c.fixed_count, 3);
    EXPECT_EQ(c.element.size(), 1u);
    return c.element.empty() ? Conversion{} : c.element.front();
  };
  const Conversion integer = element(array_of(int_t(), 3));
  EXPECT_EQ(integer.name, "fields/element_integer");
  EXPECT_EQ(integer.range.bits, 32);
  EXPECT_TRUE(integer.range.is_signed);
  EXPECT_EQ(element(array_of(float_t(), 3)).name, "fields/element_float");
  // An array of structs reads copies, as NVIDIA's modules do (cudaEglFrame's
  // planeDesc[1].width = 1 leaves the frame as it was); a struct field a view.
  const Conversion record = element(array_of(record_v2(), 3));
  EXPECT_EQ(record.name, "fields/element_record_copy");
  EXPECT_EQ(of(record_v2()).name, "fields/record");
  EXPECT_EQ(record.record_class, "caseRecord");
  EXPECT_EQ(record.c_type.name, record_v2().name);  // the item, not the array
  const Conversion mode = element(array_of(named(TypeKind::Enum, "caseMode", 4), 3));
  EXPECT_EQ(mode.name, "fields/element_enum");
  EXPECT_EQ(mode.enum_name, "caseMode");
  EXPECT_FALSE(mode.range.is_signed);
  // CUeglFrame's `CUarray pArray[3]` and `void* pPitch[3]`: handles, addresses.
  const Conversion handles = element(array_of(handle_t(), 3));
  EXPECT_EQ(handles.name, "fields/element_handle");
  EXPECT_EQ(handles.handle, "caseHandle");
  EXPECT_EQ(element(array_of(ptr(void_t()), 3)).name, "fields/element_address");
  // A char array is a string, not a list of items.
  EXPECT_TRUE(of(array_of(char_t(), 3)).element.empty());
}

TEST(AssignConversions, IntegerHandlesKnowTheirStorage) {
  Model m = model_with({});
  Typedef storage;
  storage.name = "caseDevice";
  storage.type = size_t_t();
  m.typedefs.push_back(storage);
  Handle integer;
  integer.name = "caseDevice";
  integer.is_integer = true;
  Handle opaque;
  opaque.name = "caseStream";
  m.handles = {integer, opaque};
  passes::assign_conversions(m);
  EXPECT_EQ(m.handles[0].conversion.name, "integer_handle.pyx");
  EXPECT_EQ(m.handles[0].conversion.range.bits, 64);
  EXPECT_EQ(m.handles[0].conversion.error_value, "0");  // unsigned: no -1
  EXPECT_EQ(m.handles[1].conversion.name, "handle.pyx");
}

}  // namespace

TEST(AssignConversions, AttributeValuesKnowTheirStorageAndSetter) {
  Model m;
  AttributeTable t;
  t.enum_name = "caseAttr";
  AttributeValue flag, path, count;
  flag.member = "CASE_FLAG";
  flag.type = builtin(TypeKind::Bool, "bool", false, 1);
  path.member = "CASE_PATH";
  path.type = char_t();
  path.string_size = 64;
  count.member = "CASE_COUNT";
  count.type = int_t();
  t.values = {flag, path, count};
  m.attribute_tables = {t};
  cubind::passes::assign_conversions(m);
  const auto& v = m.attribute_tables[0].values;
  // A C bool is one byte; the union keeps it as one, not as a Cython bint (an int).
  EXPECT_EQ(v[0].storage.kind, TypeKind::Integer);
  EXPECT_EQ(v[0].storage.canonical, "unsigned char");
  EXPECT_EQ(v[0].storage.size, 1);
  EXPECT_EQ(v[0].setter, AttributeValue::Setter::Element);
  // A string is copied whole, not through an element conversion.
  EXPECT_EQ(v[1].setter, AttributeValue::Setter::FixedString);
  EXPECT_EQ(v[2].storage.canonical, "int");
  EXPECT_EQ(v[2].setter, AttributeValue::Setter::Element);
}

TEST(MarkFailureMembers, TheLargestUnlessTheSpecNamesOne) {
  Model m = model_with({});
  Enum status;
  status.name = "caseStatus";
  status.values = {{"CASE_OK", 0, {}}, {"CASE_FAILED", 1, {}}, {"CASE_UNKNOWN", 999, {}}};
  m.enums = {status, status};
  m.enums[1].name = "caseOther";
  cubind::spec::Spec s = cubind::spec::parse(
      "[library]\nname = \"c\"\nc_module = \"cc\"\npy_module = \"_c\"\nheaders = [\"c.h\"]\n"
      "status_type = \"caseStatus\"\n[conventions]\nfailure_members = { caseOther = \"CASE_FAILED\" }\n",
      "case.toml");
  passes::mark_failure_members(m, s);
  EXPECT_EQ(m.enums[0].failure_member, "CASE_UNKNOWN");
  EXPECT_EQ(m.enums[1].failure_member, "CASE_FAILED");
  s.conventions.failure_members["caseOther"] = "CASE_NOPE";
  EXPECT_THROW(passes::mark_failure_members(m, s), std::runtime_error);
}

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

// cuda_egl_interop.h: cudaGraphicsEGLRegisterImage(struct cudaGraphicsResource
// **pCudaResource, ...) is an output of cudaGraphicsResource_t, as the
// functions spelling the typedef take it.
TEST(NameTaggedHandles, PointerToAHandlesStructIsTheHandle) {
  Model m;
  Handle h;
  h.name = "caseResource_t";
  h.record_tag = "caseResource";
  m.handles.push_back(h);
  Type tag = record_t("caseResource");
  tag.size = -2;  // incomplete
  m.functions.push_back(fn("caseRegister", {param("res", ptr(ptr(tag))), param("other", ptr(record_t()))}));
  passes::name_tagged_handles(m);
  const Type& res = m.functions[0].params[0].type;
  ASSERT_EQ(res.kind, TypeKind::Pointer);
  EXPECT_EQ(res.pointee().kind, TypeKind::Handle);
  EXPECT_EQ(res.pointee().name, "caseResource_t");
  EXPECT_EQ(res.pointee().spelling, "caseResource_t");
  // A pointer to another struct stays one.
  EXPECT_EQ(m.functions[0].params[1].type.kind, TypeKind::Pointer);
  EXPECT_EQ(m.functions[0].params[1].type.pointee().kind, TypeKind::Record);
}

TEST(NameTaggedHandles, RunsBeforeTheParameterRules) {
  const std::vector<std::string> order = passes::pass_names();
  const auto at = [&](const std::string& name) { return std::find(order.begin(), order.end(), name) - order.begin(); };
  EXPECT_LT(at("name_tagged_handles"), at("infer_parameters"));
}

// cudaEGL.h: cuGraphicsEGLRegisterImage(..., EGLImageKHR image, ...), where
// EGLImageKHR is eglext.h's `typedef void *EGLImageKHR`: the spec's
// void_handles make it a handle class, declared once, at its uses only.
TEST(MarkVoidHandles, TypedefsOfVoidPointerTheSpecNamesAreHandles) {
  Model m;
  Type image = ptr(void_t());
  image.name = "caseImageKHR";
  image.spelling = "caseImageKHR";
  Type other = ptr(void_t());
  other.name = "caseOther";
  Function f = fn("caseRegister", {param("image", image), param("other", other), param("data", ptr(void_t()))});
  f.header = "case_egl.h";
  m.functions.push_back(f);
  cubind::spec::Spec spec;
  spec.void_handles = {"caseImageKHR", "caseUnused"};
  passes::mark_void_handles(m, spec);
  const auto& params = m.functions[0].params;
  EXPECT_EQ(params[0].type.kind, TypeKind::Handle);
  EXPECT_EQ(params[0].type.name, "caseImageKHR");
  EXPECT_EQ(params[1].type.kind, TypeKind::Pointer);  // not named by the spec
  EXPECT_EQ(params[2].type.kind, TypeKind::Pointer);  // a plain void*
  ASSERT_EQ(m.handles.size(), 1u);  // caseUnused: no use, no class
  EXPECT_EQ(m.handles[0].name, "caseImageKHR");
  EXPECT_EQ(m.handles[0].record_tag, "caseImageKHR");
  EXPECT_EQ(m.handles[0].header, "case_egl.h");
  EXPECT_FALSE(m.handles[0].is_integer);
}

// cufile.h's `typedef void* CUfileHandle_t`, in the spec's own header: the
// handle replaces the typedef (one declaration), in its place.
TEST(MarkVoidHandles, AVoidTypedefOfTheLibrarysOwnHeaderIsDeclaredOnce) {
  Model m;
  Type fh = ptr(void_t());
  fh.name = "caseFileHandle_t";
  fh.spelling = "caseFileHandle_t";
  Typedef own;
  own.name = "caseFileHandle_t";
  own.order = 7;
  own.type = ptr(void_t());
  own.header = "case_file.h";
  m.typedefs.push_back(own);
  m.functions.push_back(fn("caseClose", {param("fh", fh)}));
  cubind::spec::Spec spec;
  spec.void_handles = {"caseFileHandle_t"};
  passes::mark_void_handles(m, spec);
  ASSERT_EQ(m.handles.size(), 1u);
  EXPECT_EQ(m.handles[0].order, 7);
  EXPECT_TRUE(m.typedefs.empty());
}

// cufile.h's cuFileStreamRegister(CUstream stream, ...), CUstream being
// cuda.h's: the spec's foreign_handles make it a handle class carrying the
// struct tag the driver module's class has, so cuda.CUstream objects pass.
TEST(MarkVoidHandles, ForeignHandlesCarryTheTagTheSpecGives) {
  Model m;
  Function f = fn("caseStreamRegister", {param("stream", handle_t("caseStream")), param("other", handle_t("caseOther"))});
  f.header = "case_file.h";
  m.functions.push_back(f);
  cubind::spec::Spec spec;
  spec.foreign_handles = {{"caseStream", "caseStream_st"}, {"caseUnused", "caseUnused_st"}};
  passes::mark_void_handles(m, spec);
  ASSERT_EQ(m.handles.size(), 1u);  // caseUnused: no use, no class; caseOther: not named
  EXPECT_EQ(m.handles[0].name, "caseStream");
  EXPECT_EQ(m.handles[0].record_tag, "caseStream_st");
  EXPECT_EQ(m.handles[0].order, -1);
  EXPECT_EQ(m.handles[0].header, "case_file.h");
}

// cufile.h's CUfileError_t.cu_err is cuda.h's CUresult (foreign_typedefs:
// its integer type), its cuFileBatchIOGetStatus takes <time.h>'s struct
// timespec and CUfileFSOps_t names sockaddr_t, a typedef of <sys/socket.h>'s
// struct (foreign_records: declared without fields, a tag only where the
// header spells `struct`).
TEST(DeclareForeignTypedefs, ForeignEnumsAreIntegersAndForeignRecordsOpaque) {
  Model m;
  Type drv = enum_t("caseDrvResult");
  drv.is_signed = false;
  Type timespec = record_t("caseTimespec");  // spelled "struct caseTimespec"
  Type sockaddr = record_t("caseSockaddr_t");
  sockaddr.spelling = "caseSockaddr_t";
  Record error;
  error.name = "caseError_t";
  Field field;
  field.name = "drv";
  field.type = drv;
  error.fields = {field};
  m.records.push_back(error);
  m.functions.push_back(fn("caseWait", {param("timeout", ptr(timespec, true)), param("addr", ptr(sockaddr))}));
  cubind::spec::Spec spec;
  spec.foreign_typedefs = {"caseDrvResult"};
  spec.foreign_records = {"caseTimespec", "caseSockaddr_t", "caseUnused"};
  passes::declare_foreign_typedefs(m, spec);
  EXPECT_EQ(m.records[0].fields[0].type.kind, TypeKind::Integer);
  EXPECT_EQ(m.records[0].fields[0].type.canonical, "unsigned int");
  ASSERT_EQ(m.typedefs.size(), 1u);
  EXPECT_EQ(m.typedefs[0].name, "caseDrvResult");
  ASSERT_EQ(m.records.size(), 3u);  // caseUnused: no use, no declaration
  EXPECT_EQ(m.records[1].name, "caseTimespec");
  EXPECT_EQ(m.records[1].tag, "caseTimespec");
  EXPECT_TRUE(m.records[1].fields.empty());
  EXPECT_EQ(m.records[1].order, -1);
  EXPECT_EQ(m.records[2].name, "caseSockaddr_t");
  EXPECT_EQ(m.records[2].tag, "");
}

}  // namespace

namespace {

cubind::model::Enum enum_of(const std::string& name, std::vector<std::pair<std::string, int64_t>> members) {
  cubind::model::Enum e;
  e.name = name;
  for (const auto& [member, value] : members) e.values.push_back({member, value, {}});
  return e;
}

TEST(FindTwinEnums, SameValuesAndMostNamesAfterThePrefixesMakeTwins) {
  cubind::model::Model m;
  m.enums = {enum_of("cudaDeviceAttr", {{"cudaDevAttrMaxThreads", 1}, {"cudaDevAttrWarpSize", 2},
                                        {"cudaDevAttrMaxWidth", 3}}),
             enum_of("cudaMode", {{"cudaModeNone", 0}, {"cudaModeAll", 1}}),
             enum_of("cudaKind", {{"cudaKindUnregistered", 0}, {"cudaKindHost", 1}, {"cudaKindDevice", 2}})};
  m.twin_candidates = {
      // One name differs (MAXIMUM), one member more: still the twin.
      enum_of("CUdevice_attribute", {{"CU_DEVICE_ATTRIBUTE_MAX_THREADS", 1}, {"CU_DEVICE_ATTRIBUTE_WARP_SIZE", 2},
                                     {"CU_DEVICE_ATTRIBUTE_MAXIMUM_WIDTH", 3}, {"CU_DEVICE_ATTRIBUTE_MAX", 4}}),
      // The values, not the names.
      enum_of("CUrounding", {{"CU_ROUND_NEAREST", 0}, {"CU_ROUND_ZERO", 1}}),
      // The names, but a value neither side has (4).
      enum_of("CUkind", {{"CU_KIND_HOST", 1}, {"CU_KIND_DEVICE", 2}, {"CU_KIND_UNIFIED", 4}})};
  passes::find_twin_enums(m);
  EXPECT_EQ(m.enums[0].twins, std::vector<std::string>{"CUdevice_attribute"});
  EXPECT_TRUE(m.enums[1].twins.empty());
  EXPECT_TRUE(m.enums[2].twins.empty());
}

TEST(FindTwinEnums, HalfTheNamesOrOneMemberIsNoTwin) {
  cubind::model::Model m;
  m.enums = {enum_of("cudaPair", {{"cudaPairLeft", 0}, {"cudaPairRight", 1}}),
             enum_of("cudaLone", {{"cudaLoneOnly", 0}})};
  m.twin_candidates = {enum_of("CUpair", {{"CU_PAIR_LEFT", 0}, {"CU_PAIR_OTHER", 1}}),
                       enum_of("CUlone", {{"CU_LONE_ONLY", 0}})};
  passes::find_twin_enums(m);
  EXPECT_TRUE(m.enums[0].twins.empty());
  EXPECT_TRUE(m.enums[1].twins.empty());
}

}  // namespace

namespace {

TEST(NameTypeAliases, TypedefsAndDefinesOfAClassAreBoundToIt) {
  using namespace cubind::model;
  Model m;
  Enum e;
  e.name = "CUlaunchAttributeID";
  e.tag = "CUlaunchAttributeID_enum";
  e.values = {{"CU_LAUNCH_ATTRIBUTE_IGNORE", 0, {}}};
  m.enums = {e};
  Handle h;
  h.name = "CUdevice";
  h.is_integer = true;
  m.handles = {h};
  Record r;
  r.name = r.public_name = "cudaLaunchAttributeValue";
  m.records = {r};
  Typedef enum_typedef;
  enum_typedef.name = "CUstreamAttrID";
  enum_typedef.type = builders::named(TypeKind::Enum, "CUlaunchAttributeID", 4);
  Typedef version;
  version.name = "CUdevice_v1";
  version.type = builders::int_t();
  Typedef plain;  // an integer typedef with no class: no alias
  plain.name = "cuuint32_t";
  plain.type = builders::int_t();
  m.typedefs = {enum_typedef, version, plain};
  m.type_aliases = {{"cudaStreamAttrValue", "cudaLaunchAttributeValue", "driver_types.h"},
                    {"cudaNoClass", "cuuint32_t", "driver_types.h"}};
  passes::name_type_aliases(m, cubind::spec::Spec{});
  EXPECT_EQ(m.enums[0].aliases, std::vector<std::string>{"CUstreamAttrID"});
  EXPECT_EQ(m.handles[0].aliases, std::vector<std::string>{"CUdevice_v1"});
  EXPECT_EQ(m.records[0].aliases, std::vector<std::string>{"cudaStreamAttrValue"});
  std::vector<std::string> bound;
  for (const auto& a : m.type_aliases) bound.push_back(a.name + "=" + a.target);
  EXPECT_EQ(bound, (std::vector<std::string>{"cudaStreamAttrValue=cudaLaunchAttributeValue",
                                             "CUstreamAttrID=CUlaunchAttributeID", "CUdevice_v1=CUdevice"}));
}

}  // namespace

// passes::infer_parameters: the role, direction and links of every parameter,
// on small models built by hand.
#include <gtest/gtest.h>

#include "model/model.hpp"
#include "passes/passes.hpp"
#include "spec/spec.hpp"
#include "unit/builders.hpp"

namespace {

using namespace cubind::model;
using cubind::passes::infer_parameters;
using namespace builders;
namespace spec = cubind::spec;

// The naming conventions bindings/*.toml give the CUDA libraries.
spec::Conventions cuda_conventions() {
  spec::Conventions c;
  c.count_prefixes = {"num", "n"};
  c.count_suffixes = {"Count", "count"};
  c.count_names = {"count"};
  c.length_params = {"len", "length", "size", "bufferSize", "bufSize"};
  c.size_query = spec::Rewrite{"^(.*)$", "$1Size"};
  c.count_query = spec::Rewrite{"^(.*?Get)(.*)$", "$1Num$2"};
  c.output_wording = {"Returned", "Returns", "Pointer to return", "Location to return", "Location where", "Output", "On success"};
  c.optional_wording = {"Optional"};
  return c;
}

spec::Spec basic_spec() {
  spec::Spec s;
  s.library = "case";
  s.status_type = "caseResult";
  s.conventions = cuda_conventions();
  return s;
}

Model model_of(std::vector<Function> functions) {
  Model m;
  m.library = "case";
  m.headers = {"case.h"};
  m.functions = std::move(functions);
  return m;
}

const Param& param_of(const Model& m, const std::string& function, const std::string& name) {
  const Function* f = m.function(function);
  if (!f) throw std::runtime_error("no function " + function);
  for (const auto& p : f->params)
    if (p.name == name) return p;
  throw std::runtime_error("no parameter " + name);
}

Model infer(std::vector<Function> functions, const spec::Spec& s = basic_spec()) {
  Model m = model_of(std::move(functions));
  infer_parameters(m, s);
  return m;
}

// ---- by-value parameters and the status ----

TEST(InferParameters, ByValueRoles) {
  const Model m = infer({fn("caseSet", {param("i", int_t()), param("f", float_t()), param("e", enum_t("caseMode")),
                                        param("h", handle_t()), param("r", record_t()), param("s", size_t_t())})});
  EXPECT_EQ(param_of(m, "caseSet", "i").role, Role::Scalar);
  EXPECT_EQ(param_of(m, "caseSet", "f").role, Role::Scalar);
  EXPECT_EQ(param_of(m, "caseSet", "e").role, Role::Enum);
  EXPECT_EQ(param_of(m, "caseSet", "h").role, Role::Handle);
  EXPECT_EQ(param_of(m, "caseSet", "r").role, Role::Record);
  EXPECT_EQ(param_of(m, "caseSet", "s").role, Role::Scalar);
  for (const auto& p : m.functions[0].params) {
    EXPECT_EQ(p.direction, Direction::In) << p.name;
    EXPECT_EQ(p.skip_reason, "") << p.name;
  }
}

TEST(InferParameters, ReturnsStatusOnlyForTheStatusEnum) {
  Function other = fn("caseOther", {});
  other.result = enum_t("caseMode");
  Function value = fn("caseValue", {});
  value.result = int_t();
  const Model m = infer({fn("caseStatus", {}), other, value});
  EXPECT_TRUE(m.functions[0].returns_status);
  EXPECT_FALSE(m.functions[1].returns_status);
  EXPECT_FALSE(m.functions[2].returns_status);
}

// A struct holding the status (cufile.h's CUfileError_t {CUfileOpError err;
// CUresult cu_err;}, the spec's status_record and status_member): a function
// returning it returns the status, read from that member; another struct
// result is a value.
Model with_status_record(std::vector<Function> functions, const std::string& member_type = "caseResult") {
  Model m = model_of(std::move(functions));
  Record r;
  r.name = "caseError_t";
  r.is_complete = true;
  Field err;
  err.name = "err";
  err.type = enum_t(member_type);
  Field cu;
  cu.name = "cu_err";
  cu.type = enum_t("caseDriverResult");
  r.fields = {err, cu};
  m.records.push_back(r);
  return m;
}

spec::Spec status_record_spec() {
  spec::Spec s = basic_spec();
  s.status_record = "caseError_t";
  s.status_member = "err";
  return s;
}

TEST(InferParameters, StatusRecordResultIsTheStatusReadFromItsMember) {
  Function st = fn("caseOpen", {});
  st.result = record_t("caseError_t");
  Function other = fn("casePairOf", {});
  other.result = record_t("casePair");
  Model m = with_status_record({st, other});
  infer_parameters(m, status_record_spec());
  EXPECT_TRUE(m.functions[0].returns_status);
  EXPECT_EQ(m.functions[0].status_field, "err");
  EXPECT_EQ(m.functions[0].status_field_type.name, "caseResult");
  EXPECT_FALSE(m.functions[1].returns_status);
  EXPECT_EQ(m.functions[1].status_field, "");
}

TEST(InferParameters, StatusRecordMustHoldTheStatusEnum) {
  Model missing = model_of({});
  EXPECT_THROW(infer_parameters(missing, status_record_spec()), std::runtime_error);
  Model wrong_type = with_status_record({}, "caseMode");
  EXPECT_THROW(infer_parameters(wrong_type, status_record_spec()), std::runtime_error);
  spec::Spec no_member = status_record_spec();
  no_member.status_member = "code";
  Model m = with_status_record({});
  EXPECT_THROW(infer_parameters(m, no_member), std::runtime_error);
}

// ---- out scalars ----

TEST(InferParameters, OutScalarIntPointer) {
  const Model m = infer({fn("caseVersion", {param("major", ptr(int_t())), param("minor", ptr(int_t()))})});
  for (const char* name : {"major", "minor"}) {
    const Param& p = param_of(m, "caseVersion", name);
    EXPECT_EQ(p.role, Role::OutScalar) << name;
    EXPECT_EQ(p.direction, Direction::Out) << name;
    EXPECT_EQ(p.skip_reason, "") << name;
    EXPECT_EQ(p.query_function, "") << name;
  }
}

TEST(InferParameters, OutScalarOfEnumFloatAndSize) {
  const Model m = infer({fn("caseGetInfo", {param("mode", ptr(enum_t("caseMode"))), param("scale", ptr(float_t())),
                                            param("bytes", ptr(size_t_t()))})});
  EXPECT_EQ(param_of(m, "caseGetInfo", "mode").role, Role::OutScalar);
  EXPECT_EQ(param_of(m, "caseGetInfo", "scale").role, Role::OutScalar);
  EXPECT_EQ(param_of(m, "caseGetInfo", "bytes").role, Role::OutScalar);
}

TEST(InferParameters, OutHandleIsOutScalar) {
  // Not annotated, or annotated [out]: the call creates the handle.
  const Model m = infer({fn("caseCreate", {param("h", ptr(handle_t()))}),
                         fn("caseCreate2", {param("h", ptr(handle_t()))}, {{"h", "out", "the new handle"}})});
  EXPECT_EQ(param_of(m, "caseCreate", "h").role, Role::OutScalar);
  EXPECT_EQ(param_of(m, "caseCreate", "h").direction, Direction::Out);
  EXPECT_EQ(param_of(m, "caseCreate2", "h").role, Role::OutScalar);
}

TEST(InferParameters, NonConstScalarPointerAnnotatedInIsAnArrayNeedingACount) {
  const Model m = infer({fn("caseSetFlags", {param("flags", ptr(int_t()))}, {{"flags", "in", "flags"}})});
  const Param& p = param_of(m, "caseSetFlags", "flags");
  EXPECT_EQ(p.role, Role::Unresolved);
  EXPECT_EQ(p.skip_reason, "array without a count parameter");
}

// ---- strings ----

TEST(InferParameters, ConstCharPointerIsString) {
  const Model m = infer({fn("caseAddName", {param("h", handle_t()), param("name", ptr(char_t(true)))})});
  const Param& p = param_of(m, "caseAddName", "name");
  EXPECT_EQ(p.role, Role::String);
  EXPECT_EQ(p.direction, Direction::In);
}

TEST(InferParameters, ConstCharPointerPointerIsOutString) {
  const Model m = infer({fn("caseGetLoweredName", {param("h", handle_t()), param("expr", ptr(char_t(true))),
                                                   param("lowered", ptr(ptr(char_t(true))))})});
  const Param& p = param_of(m, "caseGetLoweredName", "lowered");
  EXPECT_EQ(p.role, Role::OutString);
  EXPECT_EQ(p.direction, Direction::Out);
}

TEST(InferParameters, MutableCharPointerPointerIsSkipped) {
  const Model m = infer({fn("caseGetText", {param("text", ptr(ptr(char_t())))})});
  EXPECT_EQ(param_of(m, "caseGetText", "text").skip_reason, "char** without const");
}

// ---- string arrays and their count ----

TEST(InferParameters, StringArrayWithPrecedingCount) {
  const Model m = infer({fn("caseCompile", {param("h", handle_t()), param("numOptions", int_t()),
                                            param("options", ptr(ptr(char_t(true), true)))})});
  const Param& options = param_of(m, "caseCompile", "options");
  EXPECT_EQ(options.role, Role::StringArray);
  EXPECT_EQ(options.direction, Direction::In);
  EXPECT_EQ(options.count_param, "numOptions");
  EXPECT_EQ(param_of(m, "caseCompile", "numOptions").role, Role::Count);
  EXPECT_EQ(param_of(m, "caseCompile", "h").role, Role::Handle);
}

TEST(InferParameters, TwoStringArraysShareOneCount) {
  // nvrtcCreateProgram(prog, src, name, numHeaders, headers, includeNames)
  const Type strings = ptr(ptr(char_t(true), true));
  const Model m = infer({fn("caseCreateProgram",
                            {param("prog", ptr(handle_t())), param("src", ptr(char_t(true))),
                             param("name", ptr(char_t(true))), param("numHeaders", int_t()),
                             param("headers", strings), param("includeNames", strings)})});
  EXPECT_EQ(param_of(m, "caseCreateProgram", "prog").role, Role::OutScalar);
  EXPECT_EQ(param_of(m, "caseCreateProgram", "src").role, Role::String);
  EXPECT_EQ(param_of(m, "caseCreateProgram", "name").role, Role::String);
  EXPECT_EQ(param_of(m, "caseCreateProgram", "numHeaders").role, Role::Count);
  EXPECT_EQ(param_of(m, "caseCreateProgram", "headers").role, Role::StringArray);
  EXPECT_EQ(param_of(m, "caseCreateProgram", "headers").count_param, "numHeaders");
  EXPECT_EQ(param_of(m, "caseCreateProgram", "includeNames").role, Role::StringArray);
  EXPECT_EQ(param_of(m, "caseCreateProgram", "includeNames").count_param, "numHeaders");
}

TEST(InferParameters, CountNames) {
  const Type strings = ptr(ptr(char_t(true), true));
  const Model m = infer({
      fn("caseA", {param("nItems", int_t()), param("items", strings)}),
      fn("caseB", {param("itemCount", size_t_t()), param("items", strings)}),
      fn("caseC", {param("count", int_t()), param("items", strings)}),
      fn("caseD", {param("numItems", int_t()), param("flags", int_t()), param("items", strings)}),
  });
  EXPECT_EQ(param_of(m, "caseA", "items").count_param, "nItems");
  EXPECT_EQ(param_of(m, "caseB", "items").count_param, "itemCount");
  EXPECT_EQ(param_of(m, "caseC", "items").count_param, "count");
  // The nearest count-like integer before the array, skipping `flags`.
  EXPECT_EQ(param_of(m, "caseD", "items").count_param, "numItems");
  EXPECT_EQ(param_of(m, "caseD", "flags").role, Role::Scalar);
}

TEST(InferParameters, StringArrayWithoutCountIsSkipped) {
  const Type strings = ptr(ptr(char_t(true), true));
  const Model m = infer({fn("caseNoCount", {param("flags", int_t()), param("items", strings)})});
  const Param& p = param_of(m, "caseNoCount", "items");
  EXPECT_EQ(p.role, Role::Unresolved);
  EXPECT_EQ(p.skip_reason, "array without a count parameter");
  EXPECT_EQ(param_of(m, "caseNoCount", "flags").role, Role::Scalar);
}

TEST(InferParameters, CountAfterTheArrayWhenNoneBefore) {
  // cuda.h: `(const CUgraphNode* dependencies, size_t numDependencies)`.
  const Type strings = ptr(ptr(char_t(true), true));
  const Model m = infer({
      fn("caseCountAfter", {param("items", strings), param("numItems", int_t())}),
      fn("caseBoth", {param("nBefore", int_t()), param("items", strings), param("numAfter", int_t())}),
  });
  EXPECT_EQ(param_of(m, "caseCountAfter", "items").role, Role::StringArray);
  EXPECT_EQ(param_of(m, "caseCountAfter", "items").count_param, "numItems");
  EXPECT_EQ(param_of(m, "caseCountAfter", "numItems").role, Role::Count);
  // One before wins over one after.
  EXPECT_EQ(param_of(m, "caseBoth", "items").count_param, "nBefore");
  EXPECT_EQ(param_of(m, "caseBoth", "numAfter").role, Role::Scalar);
}

TEST(InferParameters, ConstValueArrayWithCount) {
  const Model m = infer({fn("caseSetValues", {param("numValues", int_t()), param("values", ptr(int_t(true)))})});
  EXPECT_EQ(param_of(m, "caseSetValues", "values").role, Role::Array);
  EXPECT_EQ(param_of(m, "caseSetValues", "values").count_param, "numValues");
  EXPECT_EQ(param_of(m, "caseSetValues", "numValues").role, Role::Count);
}

// ---- buffers: char* with a `<f>Size` sibling ----

TEST(InferParameters, CharPointerWithSizeSiblingIsBuffer) {
  const Model m = infer({
      fn("caseGetPTXSize", {param("h", handle_t()), param("sizeRet", ptr(size_t_t()))}),
      fn("caseGetPTX", {param("h", handle_t()), param("ptx", ptr(char_t()))}),
  });
  const Param& p = param_of(m, "caseGetPTX", "ptx");
  EXPECT_EQ(p.role, Role::Buffer);
  EXPECT_EQ(p.query_function, "caseGetPTXSize");
  EXPECT_EQ(p.skip_reason, "");
  EXPECT_EQ(param_of(m, "caseGetPTXSize", "sizeRet").role, Role::OutScalar);
}

TEST(InferParameters, CharPointerWithoutSizeSiblingIsSkipped) {
  const Model m = infer({
      fn("caseGetLogLength", {param("h", handle_t()), param("sizeRet", ptr(size_t_t()))}),
      fn("caseGetLog", {param("h", handle_t()), param("log", ptr(char_t()))}),
  });
  const Param& p = param_of(m, "caseGetLog", "log");
  EXPECT_EQ(p.role, Role::Unresolved);
  EXPECT_EQ(p.query_function, "");
  EXPECT_EQ(p.skip_reason, "char* buffer without a size query function or a length");
}

TEST(InferParameters, DocumentedOutputCharPointerWithLengthIsOutBuffer) {
  // cuda.h: cuDeviceGetName(char* name, int len, CUdevice dev), "\param name - Returned identifier string".
  const Model m = infer({
      fn("caseDeviceGetName", {param("name", ptr(char_t())), param("len", int_t()), param("dev", int_t())},
         {{"name", "", "Returned identifier string for the device"}, {"len", "", "Maximum length"}}),
      fn("caseGetText", {param("text", ptr(char_t())), param("bufferSize", size_t_t())}, {{"text", "out", ""}}),
  });
  const Param& name = param_of(m, "caseDeviceGetName", "name");
  EXPECT_EQ(name.role, Role::OutBuffer);
  EXPECT_EQ(name.direction, Direction::Out);
  EXPECT_EQ(name.count_param, "len");
  EXPECT_EQ(param_of(m, "caseDeviceGetName", "len").role, Role::Count);
  EXPECT_EQ(param_of(m, "caseDeviceGetName", "dev").role, Role::Scalar);
  EXPECT_EQ(param_of(m, "caseGetText", "text").role, Role::OutBuffer);
  EXPECT_EQ(param_of(m, "caseGetText", "text").count_param, "bufferSize");
}

TEST(InferParameters, DocumentedOutputCharPointerWithoutLengthIsSkipped) {
  const Model m = infer({fn("caseGetName", {param("name", ptr(char_t())), param("flags", int_t())},
                            {{"name", "", "Returns the name"}})});
  const Param& p = param_of(m, "caseGetName", "name");
  EXPECT_EQ(p.role, Role::Unresolved);
  EXPECT_EQ(p.skip_reason, "char* output without a length parameter");
}

// ---- out arrays: T* with a `...GetNum...` sibling ----

TEST(InferParameters, IntPointerWithGetNumSiblingIsOutArray) {
  const Model m = infer({
      fn("caseGetNumSupportedArchs", {param("numArchs", ptr(int_t()))}),
      fn("caseGetSupportedArchs", {param("supportedArchs", ptr(int_t()))}),
  });
  const Param& p = param_of(m, "caseGetSupportedArchs", "supportedArchs");
  EXPECT_EQ(p.role, Role::OutArray);
  EXPECT_EQ(p.direction, Direction::Out);
  EXPECT_EQ(p.query_function, "caseGetNumSupportedArchs");
  // The query itself returns a plain out scalar.
  EXPECT_EQ(param_of(m, "caseGetNumSupportedArchs", "numArchs").role, Role::OutScalar);
}

TEST(InferParameters, IntPointerWithoutGetNumSiblingIsOutScalar) {
  const Model m = infer({fn("caseGetSupportedArchs", {param("supportedArchs", ptr(int_t()))})});
  EXPECT_EQ(param_of(m, "caseGetSupportedArchs", "supportedArchs").role, Role::OutScalar);
}

// ---- in/out handles ----

TEST(InferParameters, HandlePointerAnnotatedInIsInOutHandle) {
  const Model m = infer({fn("caseDestroy", {param("h", ptr(handle_t()))}, {{"h", "in", "the handle"}})});
  const Param& p = param_of(m, "caseDestroy", "h");
  EXPECT_EQ(p.role, Role::InOutHandle);
  EXPECT_EQ(p.direction, Direction::InOut);
}

// A handle* documented `\param [in,out] h` is bound as a pure output today
// (passes/parameters.cpp, infer_pointer(): only `annotated == "in"` gives
// InOutHandle, so "in,out" falls through to OutScalar/Direction::Out and the
// caller cannot pass the handle in).
TEST(InferParameters, HandlePointerAnnotatedInOutIsInOutHandle) {
  const Model m = infer({fn("caseReset", {param("h", ptr(handle_t()))}, {{"h", "in,out", "the handle"}})});
  const Param& p = param_of(m, "caseReset", "h");
  EXPECT_EQ(p.role, Role::InOutHandle);
  EXPECT_EQ(p.direction, Direction::InOut);
}

// ---- void pointers, callbacks and user data ----

TEST(InferParameters, VoidPointersAreVoidPtr) {
  const Model m = infer({fn("caseCopy", {param("dst", ptr(void_t())), param("src", ptr(void_t(true))),
                                         param("bytes", size_t_t())})});
  EXPECT_EQ(param_of(m, "caseCopy", "dst").role, Role::VoidPtr);
  EXPECT_EQ(param_of(m, "caseCopy", "src").role, Role::VoidPtr);
  EXPECT_EQ(param_of(m, "caseCopy", "dst").direction, Direction::In);
}

// ---- the bytes a void* buffer is read or written for ----

spec::Spec byte_count_spec() {
  spec::Spec s = basic_spec();
  s.conventions.byte_count_params = {"ByteCount", "count"};
  return s;
}

TEST(InferParameters, VoidPointerIsPairedWithTheSpecsByteCount) {
  // cuda.h: cuMemcpyDtoH(dstHost, srcDevice, ByteCount); cuda_runtime_api.h:
  // cudaMemcpy(dst, src, count, kind): both sides hold count bytes.
  const Model m = infer({
      fn("caseCopyDtoH", {param("dstHost", ptr(void_t())), param("srcDevice", size_t_t()),
                          param("ByteCount", size_t_t())}),
      fn("caseCopy", {param("dst", ptr(void_t())), param("src", ptr(void_t(true))), param("count", size_t_t()),
                      param("kind", enum_t("caseKind"))}),
  },
                        byte_count_spec());
  EXPECT_EQ(param_of(m, "caseCopyDtoH", "dstHost").role, Role::VoidPtr);
  EXPECT_EQ(param_of(m, "caseCopyDtoH", "dstHost").count_param, "ByteCount");
  EXPECT_EQ(param_of(m, "caseCopy", "dst").count_param, "count");
  EXPECT_EQ(param_of(m, "caseCopy", "src").count_param, "count");
  // The byte count stays an input of its own.
  EXPECT_EQ(param_of(m, "caseCopy", "count").role, Role::Scalar);
  EXPECT_EQ(param_of(m, "caseCopyDtoH", "ByteCount").role, Role::Scalar);
}

TEST(InferParameters, VoidPointerKeepsNoSizeWithoutAByteCountName) {
  // cuMemGetHandleForAddressRange(handle, dptr, size, ...): `size` sizes the
  // device range, so the driver's spec leaves it out; a size_t* is no count.
  const Model m = infer({
      fn("caseRange", {param("handle", ptr(void_t())), param("dptr", size_t_t()), param("size", size_t_t())}),
      fn("caseGetData", {param("data", ptr(void_t())), param("ByteCount", ptr(size_t_t()))}),
  },
                        byte_count_spec());
  EXPECT_EQ(param_of(m, "caseRange", "handle").role, Role::VoidPtr);
  EXPECT_EQ(param_of(m, "caseRange", "handle").count_param, "");
  EXPECT_EQ(param_of(m, "caseGetData", "data").count_param, "");
}

TEST(InferParameters, VoidPointerWithSizeSiblingTakesTheQuery) {
  // nvJitLink.h: nvJitLinkGetLinkedCubin(handle, void* cubin) has
  // nvJitLinkGetLinkedCubinSize, as nvrtcGetPTX's char* has nvrtcGetPTXSize.
  const Model m = infer({
      fn("caseGetCubinSize", {param("h", handle_t()), param("size", ptr(size_t_t()))}),
      fn("caseGetCubin", {param("h", handle_t()), param("cubin", ptr(void_t())), param("count", size_t_t())}),
  },
                        byte_count_spec());
  const Param& p = param_of(m, "caseGetCubin", "cubin");
  EXPECT_EQ(p.role, Role::VoidPtr);
  EXPECT_EQ(p.direction, Direction::Out);  // not const: written (mark_written_buffers)
  EXPECT_EQ(p.query_function, "caseGetCubinSize");
  EXPECT_EQ(p.count_param, "");  // the query wins over a byte count
}

TEST(InferParameters, CountedBuffersTheCTypeLetsTheCallWriteAreWritten) {
  // One rule for every library: a char* with a size query (nvrtcGetPTX,
  // nvJitLinkGetInfoLog, nvvmGetProgramLog) and a counted void* without
  // const (cuMemcpyDtoH's dstHost, nvJitLinkGetLinkedCubin's cubin) are
  // written; a const one is read; an uncounted void* stays the caller's word.
  spec::Spec s = byte_count_spec();
  spec::ParamOverride read_only;  // cuMemHostRegister's p: only pinned
  read_only.function = "caseRegister";
  read_only.param = "p";
  read_only.direction = Direction::In;
  s.overrides.push_back(read_only);
  const Model m = infer({
      fn("caseGetLogSize", {param("h", handle_t()), param("size", ptr(size_t_t()))}),
      fn("caseGetLog", {param("h", handle_t()), param("log", ptr(char_t()))}),
      fn("caseGetImageSize", {param("h", handle_t()), param("size", ptr(size_t_t()))}),
      fn("caseGetImage", {param("h", handle_t()), param("image", ptr(void_t()))}),
      fn("caseCopy", {param("dst", ptr(void_t())), param("src", ptr(void_t(true))), param("count", size_t_t())}),
      fn("caseRegister", {param("p", ptr(void_t())), param("ByteCount", size_t_t())}),
      fn("caseFree", {param("p", ptr(void_t()))}),
  },
                        s);
  EXPECT_EQ(param_of(m, "caseGetLog", "log").role, Role::Buffer);
  EXPECT_EQ(param_of(m, "caseGetLog", "log").direction, Direction::Out);
  EXPECT_EQ(param_of(m, "caseGetImage", "image").direction, Direction::Out);
  EXPECT_EQ(param_of(m, "caseCopy", "dst").direction, Direction::Out);
  EXPECT_EQ(param_of(m, "caseCopy", "src").direction, Direction::In);
  EXPECT_EQ(param_of(m, "caseRegister", "p").count_param, "ByteCount");
  EXPECT_EQ(param_of(m, "caseRegister", "p").direction, Direction::In);  // the spec's word stays
  EXPECT_EQ(param_of(m, "caseFree", "p").direction, Direction::In);      // no size: not known to be written
}

TEST(InferParameters, UserDataHasNoByteCount) {
  const Model m = infer({fn("caseHostFunc", {param("fn", callback_t("caseHostFn", {ptr(void_t())})),
                                             param("userData", ptr(void_t())), param("ByteCount", size_t_t())})},
                        byte_count_spec());
  EXPECT_EQ(param_of(m, "caseHostFunc", "userData").role, Role::UserData);
  EXPECT_EQ(param_of(m, "caseHostFunc", "userData").count_param, "");
}

// ---- a const char* or const void* followed by its length: bytes read ----

TEST(InferParameters, ConstCharPointerFollowedByItsLengthIsABuffer) {
  // nvvm.h: nvvmAddModuleToProgram(prog, buffer, size, name): LLVM bitcode,
  // NUL bytes and all, counted by `size` (a length_params name). The name
  // after `size` stays a C string: a length counts the pointer it follows.
  const Model m = infer({fn("caseAddModule", {param("prog", handle_t()), param("buffer", ptr(char_t(true))),
                                              param("size", size_t_t()), param("name", ptr(char_t(true)))})});
  const Param& buffer = param_of(m, "caseAddModule", "buffer");
  EXPECT_EQ(buffer.role, Role::VoidPtr);
  EXPECT_EQ(buffer.count_param, "size");
  EXPECT_EQ(buffer.direction, Direction::In);  // const: read, never written
  EXPECT_EQ(param_of(m, "caseAddModule", "size").role, Role::Scalar);  // still passed by the caller
  EXPECT_EQ(param_of(m, "caseAddModule", "name").role, Role::String);
}

TEST(InferParameters, AByteCountNameAlsoCountsTheCharsItFollows) {
  // nvFatbin.h's byte_count_params: nvFatbinAddPTX(handle, code, size, arch, ...).
  spec::Spec s = basic_spec();
  s.conventions.length_params = {};
  s.conventions.byte_count_params = {"size"};
  const Model m = infer({fn("caseAddPTX", {param("h", handle_t()), param("code", ptr(char_t(true))),
                                           param("size", size_t_t()), param("arch", ptr(char_t(true)))})},
                        s);
  EXPECT_EQ(param_of(m, "caseAddPTX", "code").role, Role::VoidPtr);
  EXPECT_EQ(param_of(m, "caseAddPTX", "code").count_param, "size");
  EXPECT_EQ(param_of(m, "caseAddPTX", "arch").role, Role::String);
  EXPECT_EQ(param_of(m, "caseAddPTX", "arch").count_param, "");
}

TEST(InferParameters, ConstVoidPointerFollowedByItsLengthIsCounted) {
  // A `size` is no byte count name of this spec (it may size a device
  // range elsewhere in the function), but right after a const void* it is
  // that buffer's length.
  const Model m = infer({
      fn("caseAddData", {param("h", handle_t()), param("data", ptr(void_t(true))), param("size", size_t_t())}),
      fn("caseRange", {param("handle", ptr(void_t(true))), param("dptr", size_t_t()), param("size", size_t_t())}),
  });
  EXPECT_EQ(param_of(m, "caseAddData", "data").role, Role::VoidPtr);
  EXPECT_EQ(param_of(m, "caseAddData", "data").count_param, "size");
  EXPECT_EQ(param_of(m, "caseRange", "handle").count_param, "");  // not next to it
}

TEST(InferParameters, WhatFollowsACharPointerCountsItOnlyAsALength) {
  // Not a length name, not an integer by value, or already an array's
  // count (a byte count name that is also a count name, as the runtime's
  // `count`): the const char* stays a C string.
  spec::Spec s = basic_spec();
  s.conventions.byte_count_params = {"count"};
  const Model m = infer({
      fn("caseSetName", {param("name", ptr(char_t(true))), param("flags", int_t())}),
      fn("caseGetInfo", {param("key", ptr(char_t(true))), param("size", ptr(size_t_t()))}),
      fn("caseSetLabels", {param("label", ptr(char_t(true))), param("count", int_t()),
                           param("labels", ptr(ptr(char_t(true), true)))}),
  },
                        s);
  EXPECT_EQ(param_of(m, "caseSetName", "name").role, Role::String);
  EXPECT_EQ(param_of(m, "caseGetInfo", "key").role, Role::String);
  EXPECT_EQ(param_of(m, "caseSetLabels", "label").role, Role::String);
  EXPECT_EQ(param_of(m, "caseSetLabels", "count").role, Role::Count);
}

TEST(InferParameters, CallbackFollowedByVoidPointerIsCallbackAndUserData) {
  const Model m = infer({fn("caseSetCallback", {param("h", handle_t()), param("callback", callback_t()),
                                                param("payload", ptr(void_t()))})});
  const Param& cb = param_of(m, "caseSetCallback", "callback");
  EXPECT_EQ(cb.role, Role::Callback);
  EXPECT_EQ(cb.userdata_param, "payload");
  EXPECT_EQ(param_of(m, "caseSetCallback", "payload").role, Role::UserData);
}

TEST(InferParameters, NamedCallbackTypedefWithUserDataLaterOn) {
  const Model m = infer({fn("caseAddHostFunc", {param("fn", callback_t("caseHostFn", {ptr(void_t())})),
                                                param("flags", int_t()), param("userData", ptr(void_t()))})});
  EXPECT_EQ(param_of(m, "caseAddHostFunc", "fn").role, Role::Callback);
  EXPECT_EQ(param_of(m, "caseAddHostFunc", "fn").userdata_param, "userData");
  EXPECT_EQ(param_of(m, "caseAddHostFunc", "flags").role, Role::Scalar);
  EXPECT_EQ(param_of(m, "caseAddHostFunc", "userData").role, Role::UserData);
}

TEST(InferParameters, UserDataBeforeTheCallbackWhenNoneFollows) {
  // cuda.h: cuUserObjectCreate(object_out, ptr, destroy, initialRefcount, flags).
  const Model m = infer({
      fn("caseOrder", {param("data", ptr(void_t())), param("callback", callback_t()), param("flags", int_t())}),
      fn("caseBoth", {param("before", ptr(void_t())), param("callback", callback_t()), param("after", ptr(void_t()))}),
  });
  EXPECT_EQ(param_of(m, "caseOrder", "callback").userdata_param, "data");
  EXPECT_EQ(param_of(m, "caseOrder", "data").role, Role::UserData);
  // One after the callback wins.
  EXPECT_EQ(param_of(m, "caseBoth", "callback").userdata_param, "after");
  EXPECT_EQ(param_of(m, "caseBoth", "after").role, Role::UserData);
  EXPECT_EQ(param_of(m, "caseBoth", "before").role, Role::VoidPtr);
}

TEST(InferParameters, CallbackWithoutAnyVoidPointer) {
  const Model m = infer({fn("caseNoData", {param("callback", callback_t()), param("flags", int_t())})});
  EXPECT_EQ(param_of(m, "caseNoData", "callback").role, Role::Callback);
  EXPECT_EQ(param_of(m, "caseNoData", "callback").userdata_param, "");
}

TEST(InferParameters, PointerToFunctionPointerIsSkipped) {
  const Model m = infer({fn("caseGetProc", {param("pfn", ptr(callback_t()))})});
  EXPECT_EQ(param_of(m, "caseGetProc", "pfn").skip_reason, "pointer to a function pointer");
}

TEST(InferParameters, PointerToRecordIsRecordInUnlessDocumentedAsOutput) {
  Type const_record = record_t("caseProps");
  const_record.is_const = true;
  const_record.spelling = "const struct caseProps";
  const Model m = infer({
      fn("caseSetProps", {param("props", ptr(record_t("caseProps")))}),
      fn("caseSetConst", {param("props", ptr(const_record))}, {{"props", "out", "Returned properties"}}),
      fn("caseGetProps", {param("props", ptr(record_t("caseProps")))}, {{"props", "", "Returned properties"}}),
      fn("caseGetProps2", {param("props", ptr(record_t("caseProps")))}, {{"props", "out", "The properties"}}),
  });
  EXPECT_EQ(param_of(m, "caseSetProps", "props").role, Role::RecordIn);
  EXPECT_EQ(param_of(m, "caseSetProps", "props").direction, Direction::In);
  EXPECT_EQ(param_of(m, "caseSetConst", "props").role, Role::RecordIn);  // const: never an output
  EXPECT_EQ(param_of(m, "caseGetProps", "props").role, Role::RecordOut);
  EXPECT_EQ(param_of(m, "caseGetProps", "props").direction, Direction::Out);
  EXPECT_EQ(param_of(m, "caseGetProps2", "props").role, Role::RecordOut);
}

TEST(InferParameters, VoidPointerPointerDocumentedAsOutputIsOutAddress) {
  const Model m = infer({
      fn("caseMemAllocHost", {param("pp", ptr(ptr(void_t()))), param("bytesize", size_t_t())},
         {{"pp", "", "Returned pointer to host memory"}}),
      fn("caseUndocumented", {param("pp", ptr(ptr(void_t())))}),
  });
  EXPECT_EQ(param_of(m, "caseMemAllocHost", "pp").role, Role::OutAddress);
  EXPECT_EQ(param_of(m, "caseMemAllocHost", "pp").direction, Direction::Out);
  EXPECT_EQ(param_of(m, "caseUndocumented", "pp").role, Role::Unresolved);
  EXPECT_EQ(param_of(m, "caseUndocumented", "pp").skip_reason, "no rule for void **");
}

// ---- the spec's overrides win ----

spec::Spec spec_with(const std::string& functions_toml) {
  spec::Spec s = spec::parse(R"([library]
name = "case"
c_module = "ccase"
py_module = "_case"
headers = ["case.h"]
status_type = "caseResult"
)" + functions_toml,
                             "test.toml");
  s.conventions = cuda_conventions();
  return s;
}

TEST(InferParameters, OverrideWinsOverTheRules) {
  const spec::Spec s = spec_with(R"(
[functions.caseGetLog.params.log]
role = "buffer"
query_function = "caseGetLogLength"

[functions.caseDestroy.params.h]
role = "inout_handle"
direction = "inout"
)");
  const Model m = infer({
      fn("caseGetLogLength", {param("h", handle_t()), param("sizeRet", ptr(size_t_t()))}),
      fn("caseGetLog", {param("h", handle_t()), param("log", ptr(char_t()))}),
      fn("caseDestroy", {param("h", ptr(handle_t()))}),  // not annotated: the rule says OutScalar
  },
                        s);
  const Param& log = param_of(m, "caseGetLog", "log");
  EXPECT_EQ(log.role, Role::Buffer);
  EXPECT_EQ(log.query_function, "caseGetLogLength");
  EXPECT_EQ(log.skip_reason, "");  // the rule's reason is cleared
  const Param& h = param_of(m, "caseDestroy", "h");
  EXPECT_EQ(h.role, Role::InOutHandle);
  EXPECT_EQ(h.direction, Direction::InOut);
}

TEST(InferParameters, OverrideCountParam) {
  const spec::Spec s = spec_with(R"(
[functions.caseSetItems.params.items]
count_param = "total"
)");
  const Type strings = ptr(ptr(char_t(true), true));
  const Model m = infer({fn("caseSetItems", {param("numItems", int_t()), param("total", int_t()),
                                             param("items", strings)})},
                        s);
  EXPECT_EQ(param_of(m, "caseSetItems", "items").role, Role::StringArray);
  EXPECT_EQ(param_of(m, "caseSetItems", "items").count_param, "total");
  // A count named by the spec is not searched for: both integers stay inputs.
  EXPECT_EQ(param_of(m, "caseSetItems", "numItems").role, Role::Scalar);
  EXPECT_EQ(param_of(m, "caseSetItems", "total").role, Role::Scalar);
}

TEST(InferParameters, SpecCountParamPairsAVoidPointer) {
  spec::Spec s = spec_with(R"(
[functions.caseAddData.params.data]
count_param = "size"
)");
  s.conventions.byte_count_params = {"ByteCount"};
  const Model m = infer({fn("caseAddData", {param("data", ptr(void_t(true))), param("size", size_t_t())})}, s);
  EXPECT_EQ(param_of(m, "caseAddData", "data").role, Role::VoidPtr);
  EXPECT_EQ(param_of(m, "caseAddData", "data").count_param, "size");
  EXPECT_EQ(param_of(m, "caseAddData", "size").role, Role::Scalar);
}

TEST(InferParameters, SpecRoleKeepsACharPointerBeforeALengthAString) {
  // The spec may say a text is read up to its NUL whatever follows it.
  const spec::Spec s = spec_with(R"(
[functions.caseSetText.params.text]
role = "string"
)");
  const Model m = infer({fn("caseSetText", {param("text", ptr(char_t(true))), param("len", size_t_t())})}, s);
  EXPECT_EQ(param_of(m, "caseSetText", "text").role, Role::String);
  EXPECT_EQ(param_of(m, "caseSetText", "text").count_param, "");
}

TEST(InferParameters, OverrideUserDataParamLinksTheCallback) {
  const spec::Spec s = spec_with(R"(
[functions.caseSetCallback.params.callback]
userdata_param = "second"
)");
  const Model m = infer({fn("caseSetCallback", {param("callback", callback_t()), param("first", ptr(void_t())),
                                                param("second", ptr(void_t()))})},
                        s);
  EXPECT_EQ(param_of(m, "caseSetCallback", "callback").role, Role::Callback);
  EXPECT_EQ(param_of(m, "caseSetCallback", "callback").userdata_param, "second");
  EXPECT_EQ(param_of(m, "caseSetCallback", "first").role, Role::VoidPtr);
}

// With the user data named by the spec, the named parameter keeps Role::VoidPtr
// (passes/parameters.cpp, link_userdata() skips callbacks whose userdata_param
// is already set, and nothing else marks UserData). The emitter then converts it
// twice: in_voidptr and in_callback both declare `cdef void* _c_second`.
TEST(InferParameters, OverrideUserDataParamMarksItUserData) {
  const spec::Spec s = spec_with(R"(
[functions.caseSetCallback.params.callback]
userdata_param = "second"
)");
  const Model m = infer({fn("caseSetCallback", {param("callback", callback_t()), param("first", ptr(void_t())),
                                                param("second", ptr(void_t()))})},
                        s);
  EXPECT_EQ(param_of(m, "caseSetCallback", "second").role, Role::UserData);
}

TEST(InferParameters, OverrideMatchesThePublicNameOrTheAbiSymbol) {
  const spec::Spec s = spec_with(R"(
[functions.caseGetLog.params.log]
role = "buffer"
query_function = "caseLogSize"

[functions.caseGetText_v2.params.text]
role = "buffer"
query_function = "caseTextSize"
)");
  Function log = fn("caseGetLog", {param("log", ptr(char_t()))});
  log.alias_of = "caseGetLog_v2";
  Function text = fn("caseGetText", {param("text", ptr(char_t()))});
  text.alias_of = "caseGetText_v2";
  const Model m = infer({log, text}, s);
  EXPECT_EQ(param_of(m, "caseGetLog", "log").role, Role::Buffer);
  EXPECT_EQ(param_of(m, "caseGetLog", "log").query_function, "caseLogSize");
  EXPECT_EQ(param_of(m, "caseGetText", "text").role, Role::Buffer);
  EXPECT_EQ(param_of(m, "caseGetText", "text").query_function, "caseTextSize");
}

TEST(InferParameters, OptionalOverrideOfAnAbsentParameterChangesNothing) {
  // A parameter some versions' headers lack (12.x's cuGraphAddDependencies has no edgeData).
  const spec::Spec s = spec_with(R"(
[functions.caseGetLog.params.other]
optional = true
role = "buffer"
)");
  const Model m = infer({fn("caseGetLog", {param("log", ptr(char_t()))})}, s);
  EXPECT_EQ(param_of(m, "caseGetLog", "log").role, Role::Unresolved);
  EXPECT_NE(param_of(m, "caseGetLog", "log").skip_reason, "");
}

TEST(InferParameters, OverrideOfAnAbsentParameterFails) {
  // A renamed parameter would otherwise lose its override without a word.
  const spec::Spec s = spec_with(R"(
[functions.caseGetLog.params.other]
role = "buffer"
[functions.caseGetLog.params.log]
role = "buffer"
query_function = "caseGetLogLength"
)");
  try {
    infer({fn("caseGetLog", {param("h", handle_t()), param("log", ptr(char_t()))})}, s);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("functions.caseGetLog.params.other: caseGetLog has no such parameter "
                                         "(its parameters: h, log)"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("params.log:"), std::string::npos) << e.what();
  }
}

TEST(InferParameters, OverrideOfAFunctionTheHeadersLackIsKept) {
  // Another version's function (13.x's cuGraphAddNode_v2 in 12.x headers): nothing to check.
  const spec::Spec s = spec_with(R"(
[functions.caseNewer.params.items]
role = "array"
)");
  EXPECT_NO_THROW(infer({fn("caseGetLog", {param("log", ptr(char_t()))})}, s));
}

TEST(InferParameters, OverrideAppliesUnderTheParametersOtherNames) {
  // 13.5 renamed cuDevSmResourceSplitByCount's `remaining` to `remainder`.
  const spec::Spec s = spec_with(R"(
[functions.caseSplit.params.remaining]
other_names = ["remainder"]
role = "record_out"
)");
  const Model old_form = infer({fn("caseSplit", {param("remaining", ptr(record_t()))})}, s);
  EXPECT_EQ(param_of(old_form, "caseSplit", "remaining").role, Role::RecordOut);
  const Model new_form = infer({fn("caseSplit", {param("remainder", ptr(record_t()))})}, s);
  EXPECT_EQ(param_of(new_form, "caseSplit", "remainder").role, Role::RecordOut);
}

TEST(InferParameters, DirectionOnlyOverrideKeepsTheRuleRole) {
  const spec::Spec s = spec_with(R"(
[functions.caseVersion.params.major]
direction = "inout"
)");
  const Model m = infer({fn("caseVersion", {param("major", ptr(int_t()))})}, s);
  EXPECT_EQ(param_of(m, "caseVersion", "major").role, Role::OutScalar);
  EXPECT_EQ(param_of(m, "caseVersion", "major").direction, Direction::InOut);
}

}  // namespace

// ---- rules added for the driver API (cuda.h shapes) ----

Type const_record_t(const std::string& name = "caseRecord") {
  Type t = record_t(name);
  t.is_const = true;
  t.spelling = "const " + t.spelling;
  return t;
}

TEST(InferParameters, StructPointerDocumentedAsReturnedIsAnOutput) {
  // cuDeviceGetUuid(CUuuid *uuid "Returned UUID", ...)
  const Model m = infer({fn("caseGetUuid", {param("uuid", ptr(record_t())), param("dev", int_t())},
                            {{"uuid", "", "Returned UUID"}, {"dev", "", "Device"}})});
  EXPECT_EQ(param_of(m, "caseGetUuid", "uuid").role, Role::RecordOut);
  EXPECT_EQ(param_of(m, "caseGetUuid", "uuid").direction, Direction::Out);
}

TEST(InferParameters, NonConstStructPointerNotDocumentedAsReturnedIsAnInput) {
  // cuCtxCreate(CUcontext*, CUctxCreateParams *ctxCreateParams "Context creation parameters", ...)
  const Model m = infer({fn("caseCreate", {param("p", ptr(record_t()))}, {{"p", "", "Creation parameters"}})});
  EXPECT_EQ(param_of(m, "caseCreate", "p").role, Role::RecordIn);
  EXPECT_EQ(param_of(m, "caseCreate", "p").direction, Direction::In);
}

TEST(InferParameters, ConstStructPointerFollowedByCountIsAnArray) {
  // cuMemSetAccess(ptr, size, const CUmemAccessDesc *desc, size_t count)
  const Model m = infer({fn("caseSetAccess", {param("size", size_t_t()), param("desc", ptr(const_record_t())),
                                              param("count", size_t_t())})});
  EXPECT_EQ(param_of(m, "caseSetAccess", "desc").role, Role::Array);
  EXPECT_EQ(param_of(m, "caseSetAccess", "desc").count_param, "count");
  EXPECT_EQ(param_of(m, "caseSetAccess", "count").role, Role::Count);
  EXPECT_EQ(param_of(m, "caseSetAccess", "size").role, Role::Scalar);
}

TEST(InferParameters, AnArrayDocumentedOptionalTakesNullWhateverItsCount) {
  // cuGraphAddNode(..., const CUgraphEdgeData *dependencyData "Optional edge data ... If NULL ...",
  //                size_t numDependencies, ...)
  const Model m = infer({fn("caseAdd", {param("data", ptr(const_record_t())), param("numData", size_t_t())},
                            {{"data", "", "Optional edge data. If NULL, the defaults."}, {"numData", "", "Count"}}),
                         fn("caseSet", {param("data", ptr(const_record_t())), param("numData", size_t_t())},
                            {{"data", "", "The edge data (not optional)."}, {"numData", "", "Count"}})});
  EXPECT_EQ(param_of(m, "caseAdd", "data").role, Role::Array);
  EXPECT_TRUE(param_of(m, "caseAdd", "data").optional);
  EXPECT_EQ(param_of(m, "caseSet", "data").role, Role::Array);
  EXPECT_FALSE(param_of(m, "caseSet", "data").optional);   // the wording must begin the text
}

TEST(InferParameters, StructPointerNextToAnotherArraysCountStaysOneStruct) {
  // cuGraphAddKernelNode(..., const CUgraphNode *dependencies, size_t numDependencies,
  //                      const CUDA_KERNEL_NODE_PARAMS *nodeParams)
  const Model m = infer({fn("caseAddNode", {param("dependencies", ptr(handle_t("caseNode"))),
                                            param("numDependencies", size_t_t()),
                                            param("nodeParams", ptr(const_record_t()))})});
  EXPECT_EQ(param_of(m, "caseAddNode", "nodeParams").role, Role::RecordIn);
  EXPECT_EQ(param_of(m, "caseAddNode", "nodeParams").count_param, "");
}

TEST(InferParameters, CountNamedForTheArrayWinsOverANearerOne) {
  // from, to, edgeData, numDependencies: the arrays before a later count.
  Type node = handle_t("caseNode");
  node.is_const = true;
  const Model m = infer({fn("caseAddDeps", {param("nFrom", int_t()), param("to", ptr(node)),
                                            param("numTo", int_t())})});
  EXPECT_EQ(param_of(m, "caseAddDeps", "to").count_param, "numTo");
}

TEST(InferParameters, VoidPointerArrayWithACountIsAnArray) {
  // cuModuleLoadDataEx(..., unsigned numOptions, CUjit_option *options, void **optionValues)
  const Model m = infer({fn("caseLoad", {param("numOptions", int_t()), param("options", ptr(enum_t("caseOpt"))),
                                         param("optionValues", ptr(ptr(void_t())))},
                            {{"numOptions", "", "Number of options"}, {"options", "", "Options for JIT"},
                             {"optionValues", "", "Option values for JIT"}})});
  EXPECT_EQ(param_of(m, "caseLoad", "options").role, Role::Array);
  EXPECT_EQ(param_of(m, "caseLoad", "optionValues").role, Role::Array);
  EXPECT_EQ(param_of(m, "caseLoad", "optionValues").count_param, "numOptions");
}

TEST(InferParameters, VoidPointerPointerDocumentedAsReturnedIsAnOutAddress) {
  // cuMemAllocHost(void **pp "Returned pointer to host memory", size_t bytesize)
  const Model m = infer({fn("caseAllocHost", {param("pp", ptr(ptr(void_t()))), param("bytesize", size_t_t())},
                            {{"pp", "", "Returned pointer to host memory"}})});
  EXPECT_EQ(param_of(m, "caseAllocHost", "pp").role, Role::OutAddress);
  EXPECT_EQ(param_of(m, "caseAllocHost", "pp").direction, Direction::Out);
}

TEST(InferParameters, CharOutputSizedByALengthParameter) {
  // cuDeviceGetName(char *name "Returned identifier string", int len, CUdevice dev)
  const Model m = infer({fn("caseGetName", {param("name", ptr(char_t())), param("len", int_t()),
                                            param("dev", int_t())},
                            {{"name", "", "Returned identifier string"}})});
  EXPECT_EQ(param_of(m, "caseGetName", "name").role, Role::OutBuffer);
  EXPECT_EQ(param_of(m, "caseGetName", "name").count_param, "len");
  EXPECT_EQ(param_of(m, "caseGetName", "len").role, Role::Count);
}

TEST(InferParameters, UserDataBeforeTheCallbackIsFound) {
  // cuUserObjectCreate(CUuserObject*, void *ptr, CUhostFn destroy, ...)
  const Model m = infer({fn("caseObjectCreate", {param("ptr", ptr(void_t())),
                                                 param("destroy", callback_t("caseHostFn", {ptr(void_t())}))})});
  EXPECT_EQ(param_of(m, "caseObjectCreate", "destroy").userdata_param, "ptr");
  EXPECT_EQ(param_of(m, "caseObjectCreate", "ptr").role, Role::UserData);
}

TEST(InferParameters, CalledOnceComesFromTheSpec) {
  spec::Spec s = basic_spec();
  spec::ParamOverride o;
  o.function = "caseLaunchHostFunc";
  o.param = "fn";
  o.called_once = true;
  s.overrides.push_back(o);
  const Model m = infer({fn("caseLaunchHostFunc", {param("fn", callback_t("caseHostFn", {ptr(void_t())})),
                                                   param("userData", ptr(void_t()))})},
                        s);
  EXPECT_TRUE(param_of(m, "caseLaunchHostFunc", "fn").called_once);
  EXPECT_EQ(param_of(m, "caseLaunchHostFunc", "fn").userdata_param, "userData");
}

// ---- naming conventions come from the spec ----

TEST(InferParameters, WithoutConventionsNoNameImpliesACount) {
  spec::Spec s = basic_spec();
  s.conventions = spec::Conventions{};
  const Type strings = ptr(ptr(char_t(true), true));
  const Model m = infer({fn("caseA", {param("nItems", int_t()), param("items", strings)})}, s);
  EXPECT_EQ(param_of(m, "caseA", "items").skip_reason, "array without a count parameter");
}

TEST(InferParameters, AnotherLibrarysConventions) {
  spec::Spec s = basic_spec();
  s.conventions = spec::Conventions{};
  s.conventions.count_suffixes = {"_len"};
  s.conventions.size_query = spec::Rewrite{"^lib_get_(.*)$", "lib_get_$1_size"};
  s.conventions.length_params = {"capacity"};
  const Type strings = ptr(ptr(char_t(true), true));
  const Model m = infer({
      fn("lib_names", {param("items", strings), param("items_len", int_t())}),
      fn("lib_get_log_size", {param("h", handle_t()), param("sizeRet", ptr(size_t_t()))}),
      fn("lib_get_log", {param("h", handle_t()), param("log", ptr(char_t()))}),
      fn("lib_describe", {param("out", ptr(char_t())), param("capacity", size_t_t())},
         {DocParam{"out", "out", "the description"}}),
  }, s);
  EXPECT_EQ(param_of(m, "lib_names", "items").count_param, "items_len");
  EXPECT_EQ(param_of(m, "lib_get_log", "log").query_function, "lib_get_log_size");
  EXPECT_EQ(param_of(m, "lib_describe", "out").count_param, "capacity");
}

TEST(InferParameters, AnInOutArrayMakesItsCountACapacity) {
  const spec::Spec s = spec_with(R"(
[functions.caseGetNodes.params.nodes]
role = "inout_array"
count_param = "numNodes"
[functions.caseBad.params.nodes]
role = "inout_array"
count_param = "n"
)");
  const Model m = infer({fn("caseGetNodes", {param("nodes", ptr(handle_t())), param("numNodes", ptr(size_t_t()))}),
                         fn("caseBad", {param("nodes", ptr(handle_t())), param("n", size_t_t())})},
                        s);
  EXPECT_EQ(param_of(m, "caseGetNodes", "nodes").direction, Direction::Out);
  EXPECT_EQ(param_of(m, "caseGetNodes", "numNodes").role, Role::InOutCount);
  EXPECT_EQ(param_of(m, "caseGetNodes", "numNodes").direction, Direction::InOut);
  // A count passed by value cannot carry the count back.
  EXPECT_EQ(param_of(m, "caseBad", "nodes").skip_reason, "in/out array without an integer* count parameter");
}

TEST(InferParameters, ArraysTheLibraryOwnsAreReturnedWithTheirCountOutput) {
  Type const_handle = handle_t();
  const_handle.is_const = true;
  Type const_record = record_t();
  const_record.is_const = true;
  const Model m = infer({fn("caseGetCaptureInfo", {param("deps_out", ptr(ptr(const_handle))),
                                                   param("edges_out", ptr(ptr(const_record))),
                                                   param("numDeps_out", ptr(size_t_t()))}),
                         fn("caseGetOrphans", {param("nodes_out", ptr(ptr(const_handle)))})});
  const Param& deps = param_of(m, "caseGetCaptureInfo", "deps_out");
  EXPECT_EQ(deps.role, Role::ReturnedArray);
  EXPECT_EQ(deps.direction, Direction::Out);
  EXPECT_EQ(deps.count_param, "numDeps_out");
  EXPECT_EQ(param_of(m, "caseGetCaptureInfo", "edges_out").count_param, "numDeps_out");
  // The shared count stays an output of its own.
  EXPECT_EQ(param_of(m, "caseGetCaptureInfo", "numDeps_out").role, Role::OutScalar);
  EXPECT_EQ(param_of(m, "caseGetOrphans", "nodes_out").skip_reason, "returned array without an integer count output");
}

// ---- handles the documentation lets stand for another ----

Model with_casts(std::vector<Function> functions) {
  spec::Spec s = basic_spec();
  s.conventions.also_accepts["caseFunction"] = {"caseKernel", "casting to ::caseFunction"};
  Model m = infer(std::move(functions), s);
  Handle function, kernel;
  function.name = "caseFunction";
  kernel.name = "caseKernel";
  m.handles = {function, kernel};
  cubind::passes::accept_documented_casts(m, s);
  return m;
}

TEST(AcceptDocumentedCasts, TakesTheOtherHandleWhereTheDocSaysSo) {
  Function launch = fn("caseLaunch", {param("f", handle_t("caseFunction"))});
  launch.doc.body = "A kernel can be used by passing it to the API by\ncasting to ::caseFunction.";
  Function in_param = fn("caseOccupancy", {param("f", handle_t("caseFunction"))},
                         {{"f", "", "Function or kernel (by Casting to ::caseFunction)"}});
  const Model m = with_casts({launch, in_param, fn("caseGetName", {param("f", handle_t("caseFunction"))})});
  EXPECT_EQ(param_of(m, "caseLaunch", "f").also_accepts, "caseKernel");  // across a line break
  EXPECT_EQ(param_of(m, "caseOccupancy", "f").also_accepts, "caseKernel");
  EXPECT_EQ(param_of(m, "caseGetName", "f").also_accepts, "");  // the doc does not say so
}

TEST(AcceptDocumentedCasts, OnlyTheRulesHandleTypeAndAKnownOtherHandle) {
  Function other = fn("caseStreamOp", {param("s", handle_t("caseStream"))});
  other.doc.body = "casting to ::caseFunction";
  EXPECT_EQ(param_of(with_casts({other}), "caseStreamOp", "s").also_accepts, "");
  spec::Spec s = basic_spec();
  s.conventions.also_accepts["caseFunction"] = {"caseNoSuchHandle", "x"};
  Model m = model_of({});
  EXPECT_THROW(cubind::passes::accept_documented_casts(m, s), std::runtime_error);
}

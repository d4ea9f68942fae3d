// spec::parse: bindings/<library>.toml -> spec::Spec, and its errors.
#include <gtest/gtest.h>

#include <stdexcept>

#include "spec/spec.hpp"

namespace {

namespace spec = cubind::spec;
using cubind::model::Direction;
using cubind::model::Role;

const char* kFull = R"(# A spec with every table.
[library]
name = "nvrtc"
c_module = "cnvrtc"
py_module = "_nvrtc"
headers = ["nvrtc.h", "nvrtc_extra.h"]
status_type = "nvrtcResult"
version_header = "cuda.h"
version_macro = "CUDA_VERSION"
clang_args = ["-DFOO=1", "-std=gnu11"]

[loader]
sonames = ["libnvrtc.so.13", "libnvrtc.so"]
env_var = "CUBIND_NVRTC_LIBRARY"
wheel_subdirs = ["nvidia/cu13/lib"]
toolkit_subdirs = ["nvvm/lib64", "lib64"]

[functions.nvrtcGetLog.params.log]
role = "buffer"
direction = "in"
query_function = "nvrtcGetLogSize"

[functions.nvrtcSetCallback.params.callback]
role = "callback"
userdata_param = "payload"
on_error_return = 1

[functions.nvrtcSetCallback.params.numItems]
role = "count"
count_param = "items"

[functions.nvrtcSetStrides.params.strides]
role = "array"
count_param = "rank"
count_offset = -1
other_names = ["stride", "pitches"]
optional = true

[gil]
keep = ["nvrtcVersion", "nvrtcGet.*Size"]

[[skip]]
pattern = "nvrtcGet.*Internal"
reason = "internal"

[[skip]]
pattern = "nvrtcLegacy"
reason = "deprecated"
)";

// The error message of parsing `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    spec::parse(text, "bad.toml");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

const std::string kLibrary = R"([library]
name = "x"
c_module = "cx"
py_module = "_x"
headers = ["x.h"]
status_type = "xResult"
)";

TEST(SpecParse, FullSpec) {
  const spec::Spec s = spec::parse(kFull, "nvrtc.toml");
  EXPECT_EQ(s.library, "nvrtc");
  EXPECT_EQ(s.c_module, "cnvrtc");
  EXPECT_EQ(s.py_module, "_nvrtc");
  EXPECT_EQ(s.headers, (std::vector<std::string>{"nvrtc.h", "nvrtc_extra.h"}));
  EXPECT_EQ(s.status_type, "nvrtcResult");
  EXPECT_EQ(s.version_header, "cuda.h");
  EXPECT_EQ(s.version_macro, "CUDA_VERSION");
  EXPECT_EQ(s.clang_args, (std::vector<std::string>{"-DFOO=1", "-std=gnu11"}));
  EXPECT_EQ(s.sonames, (std::vector<std::string>{"libnvrtc.so.13", "libnvrtc.so"}));
  EXPECT_EQ(s.env_var, "CUBIND_NVRTC_LIBRARY");
  EXPECT_EQ(s.wheel_subdirs, std::vector<std::string>{"nvidia/cu13/lib"});
  EXPECT_EQ(s.toolkit_subdirs, (std::vector<std::string>{"nvvm/lib64", "lib64"}));

  ASSERT_EQ(s.overrides.size(), 4u);
  const spec::ParamOverride* log = s.override_for("nvrtcGetLog", "log");
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->role, Role::Buffer);
  EXPECT_EQ(log->direction, Direction::In);
  EXPECT_EQ(log->query_function, "nvrtcGetLogSize");
  EXPECT_EQ(log->count_param, "");
  const spec::ParamOverride* cb = s.override_for("nvrtcSetCallback", "callback");
  ASSERT_NE(cb, nullptr);
  EXPECT_EQ(cb->role, Role::Callback);
  EXPECT_FALSE(cb->direction.has_value());
  EXPECT_EQ(cb->userdata_param, "payload");
  EXPECT_EQ(cb->on_error_return, 1);
  const spec::ParamOverride* count = s.override_for("nvrtcSetCallback", "numItems");
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->role, Role::Count);
  EXPECT_EQ(count->count_param, "items");
  EXPECT_FALSE(count->count_offset.has_value());
  const spec::ParamOverride* strides = s.override_for("nvrtcSetStrides", "strides");
  ASSERT_NE(strides, nullptr);
  EXPECT_EQ(strides->count_offset, -1);
  EXPECT_TRUE(strides->optional);
  EXPECT_FALSE(log->optional);
  EXPECT_TRUE(log->other_names.empty());
  // Found under any of its names.
  EXPECT_EQ(s.override_for("nvrtcSetStrides", "pitches"), strides);
  EXPECT_EQ(s.override_for("nvrtcSetStrides", "stride"), strides);
  EXPECT_EQ(s.keep_gil, (std::vector<std::string>{"nvrtcVersion", "nvrtcGet.*Size"}));
  EXPECT_EQ(s.override_for("nvrtcGetLog", "prog"), nullptr);
  EXPECT_EQ(s.override_for("nvrtcOther", "log"), nullptr);

  ASSERT_EQ(s.skips.size(), 2u);
  EXPECT_EQ(s.skips[0].pattern, "nvrtcGet.*Internal");
  EXPECT_EQ(s.skips[0].reason, "internal");
  EXPECT_EQ(s.skips[1].pattern, "nvrtcLegacy");
  EXPECT_EQ(s.skips[1].reason, "deprecated");
}

TEST(SpecParse, MinimalSpecLeavesOptionalKeysEmpty) {
  const spec::Spec s = spec::parse(kLibrary, "x.toml");
  EXPECT_EQ(s.library, "x");
  EXPECT_EQ(s.version_header, "");
  EXPECT_EQ(s.version_macro, "");
  EXPECT_TRUE(s.clang_args.empty());
  EXPECT_TRUE(s.sonames.empty());
  EXPECT_EQ(s.env_var, "");
  EXPECT_TRUE(s.overrides.empty());
  EXPECT_TRUE(s.skips.empty());
  EXPECT_TRUE(s.keep_gil.empty());
}

TEST(SpecParse, TheRepositorysNvrtcSpecShape) {
  // What bindings/nvrtc.toml holds.
  const spec::Spec s = spec::parse(R"([library]
name = "nvrtc"            # the Python package users import
c_module = "cnvrtc"
py_module = "_nvrtc"
headers = ["nvrtc.h"]
status_type = "nvrtcResult"
version_header = "cuda.h"
version_macro = "CUDA_VERSION"

[loader]
sonames = ["libnvrtc.so.13", "libnvrtc.so"]
env_var = "CUBIND_NVRTC_LIBRARY"
wheel_subdirs = ["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"]
)",
                                   "nvrtc.toml");
  EXPECT_EQ(s.wheel_subdirs.size(), 2u);
  EXPECT_TRUE(s.overrides.empty());
}

class MissingRequiredKey : public ::testing::TestWithParam<const char*> {};

TEST_P(MissingRequiredKey, ErrorNamesTheFileAndTheKey) {
  const std::string key = GetParam();
  std::string text = kLibrary;
  const auto at = text.find("\n" + key + " = ");
  ASSERT_NE(at, std::string::npos);
  text.erase(at + 1, text.find('\n', at + 1) - at);
  EXPECT_EQ(error_of(text), "bad.toml: library." + key + ": missing");
}

INSTANTIATE_TEST_SUITE_P(SpecParse, MissingRequiredKey,
                         ::testing::Values("name", "c_module", "py_module", "status_type"));

TEST(SpecParse, MissingHeaders) {
  std::string text = kLibrary;
  text.erase(text.find("headers"), std::string("headers = [\"x.h\"]\n").size());
  EXPECT_EQ(error_of(text), "bad.toml: library.headers: needs at least one header");
  EXPECT_EQ(error_of(kLibrary + std::string("clang_args = []\n")), "");
}

TEST(SpecParse, MissingLibraryTable) {
  EXPECT_EQ(error_of("[loader]\nenv_var = \"X\"\n"), "bad.toml: library: missing table");
}

TEST(SpecParse, LoaderNeedsEnvVar) {
  EXPECT_EQ(error_of(kLibrary + "[loader]\nsonames = [\"libx.so\"]\n"), "bad.toml: loader.env_var: missing");
}

TEST(SpecParse, WrongValueTypes) {
  EXPECT_EQ(error_of(R"([library]
name = 3
)"),
            "bad.toml: library.name: expected a string");
  std::string text = kLibrary;
  text.replace(text.find("[\"x.h\"]"), 7, "\"x.h\"");
  EXPECT_EQ(error_of(text), "bad.toml: library.headers: expected an array of strings");
  EXPECT_EQ(error_of(kLibrary + "[loader]\nenv_var = \"X\"\nsonames = [1]\n"),
            "bad.toml: loader.sonames: expected an array of strings");
  EXPECT_EQ(error_of(kLibrary + "[functions.f.params.cb]\non_error_return = \"1\"\n"),
            "bad.toml: functions.f.params.cb.on_error_return: expected an integer");
}

TEST(SpecParse, Conventions) {
  const spec::Spec s = spec::parse(kLibrary + R"([conventions]
count_prefixes = ["num"]
count_suffixes = ["Count"]
count_names = ["count"]
length_params = ["len"]
byte_count_params = ["ByteCount", "count"]
size_query = { match = "^(.*)$", replace = "$1Size" }
)",
                                   "c.toml");
  EXPECT_EQ(s.conventions.count_prefixes, std::vector<std::string>{"num"});
  EXPECT_EQ(s.conventions.length_params, std::vector<std::string>{"len"});
  EXPECT_EQ(s.conventions.byte_count_params, (std::vector<std::string>{"ByteCount", "count"}));
  ASSERT_TRUE(s.conventions.size_query.has_value());
  EXPECT_EQ(s.conventions.size_query->replace, "$1Size");
  EXPECT_FALSE(s.conventions.count_query.has_value());
  EXPECT_EQ(error_of(kLibrary + "[conventions]\nsize_query = \"x\"\n"),
            "bad.toml: conventions.size_query: expected a table { match = \"...\", replace = \"...\" }");
}

TEST(SpecParse, UnknownRoleInAnOverride) {
  EXPECT_EQ(error_of(kLibrary + "[functions.xGetLog.params.log]\nrole = \"bufer\"\n"),
            "bad.toml: functions.xGetLog.params.log.role: unknown role 'bufer'");
}

TEST(SpecParse, CharArraysAreBytesUnlessTheConventionsOrAFieldSayString) {
  EXPECT_EQ(spec::parse(kLibrary, "c.toml").conventions.char_arrays, "bytes");
  EXPECT_EQ(spec::parse(kLibrary + "[conventions]\nchar_arrays = \"string\"\n", "c.toml").conventions.char_arrays,
            "string");
  EXPECT_EQ(error_of(kLibrary + "[conventions]\nchar_arrays = \"text\"\n"),
            "bad.toml: conventions.char_arrays: expected \"bytes\" or \"string\"");
  const spec::Spec s = spec::parse(kLibrary + "[fields.prop.name]\nrole = \"string\"\n", "c.toml");
  ASSERT_EQ(s.field_counts.size(), 1u);
  EXPECT_EQ(s.field_counts[0].role, "string");
  EXPECT_EQ(error_of(kLibrary + "[fields.prop.name]\nrole = \"text\"\n"),
            "bad.toml: fields.prop.name.role: expected \"kernel_params\", \"string\" or \"bytes\"");
}

TEST(SpecParse, UnresolvedIsNotARoleTheSpecCanGive) {
  EXPECT_EQ(error_of(kLibrary + "[functions.f.params.p]\nrole = \"unresolved\"\n"),
            "bad.toml: functions.f.params.p.role: unknown role 'unresolved'");
}

TEST(SpecParse, UnknownDirectionInAnOverride) {
  EXPECT_EQ(error_of(kLibrary + "[functions.f.params.p]\ndirection = \"in,out\"\n"),
            "bad.toml: functions.f.params.p.direction: unknown direction 'in,out'");
}

TEST(SpecParse, OverrideShapeErrors) {
  EXPECT_EQ(error_of(kLibrary + "[functions]\nf = 1\n"), "bad.toml: functions.f.: expected a table");
  EXPECT_EQ(error_of(kLibrary + "[functions.f]\nrole = \"buffer\"\n"),
            "bad.toml: functions.f.params: expected a table of parameters");
  EXPECT_EQ(error_of(kLibrary + "[functions.f.params]\np = \"buffer\"\n"),
            "bad.toml: functions.f.params.p.: expected a table");
}

TEST(SpecParse, AFunctionsResult) {
  const auto s = cubind::spec::parse(kLibrary + "[functions.make_x]\nresult = \"value\"\n"
                                                "[functions.x_name]\nresult = \"status_and_value\"\n",
                                     "ok.toml");
  EXPECT_EQ(s.value_results, std::vector<std::string>{"make_x"});
  EXPECT_EQ(error_of(kLibrary + "[functions.f]\nresult = \"bare\"\n"),
            "bad.toml: functions.f.result: expected \"value\" or \"status_and_value\"");
}

TEST(SpecParse, SkipNeedsPatternAndReason) {
  EXPECT_EQ(error_of(kLibrary + "[[skip]]\npattern = \"x.*\"\n"), "bad.toml: skip.reason: missing");
  EXPECT_EQ(error_of(kLibrary + "[[skip]]\nreason = \"r\"\n"), "bad.toml: skip.pattern: missing");
}

TEST(SpecParse, TomlSyntaxErrorNamesTheLine) {
  const std::string err = error_of(kLibrary + "oops = \n");
  EXPECT_EQ(err.rfind("bad.toml: ", 0), 0u) << err;
  EXPECT_NE(err.find("at line 7"), std::string::npos) << err;
}

TEST(SpecLoad, MissingFile) {
  try {
    spec::load("/nonexistent/cubind/spec.toml");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read spec /nonexistent/cubind/spec.toml");
  }
}

TEST(SpecStrings, EveryRoleButUnresolvedRoundTrips) {
  // The role table (CUBIND_ROLES) gives the list: a role added there is checked here.
#define CUBIND_ROLE_CHECK(name, text)                                                            \
  if (Role::name != Role::Unresolved) {                                                          \
    EXPECT_EQ(spec::role_from_string(cubind::model::to_string(Role::name)), Role::name) << text; \
  }
  CUBIND_ROLES(CUBIND_ROLE_CHECK)
#undef CUBIND_ROLE_CHECK
  EXPECT_FALSE(spec::role_from_string("unresolved").has_value());
  EXPECT_FALSE(spec::role_from_string("Buffer").has_value());
  EXPECT_FALSE(spec::role_from_string("").has_value());
}

TEST(SpecStrings, Directions) {
  EXPECT_EQ(spec::direction_from_string("in"), Direction::In);
  EXPECT_EQ(spec::direction_from_string("out"), Direction::Out);
  EXPECT_EQ(spec::direction_from_string("inout"), Direction::InOut);
  EXPECT_FALSE(spec::direction_from_string("in,out").has_value());
}

}  // namespace

TEST(SpecConventions, CudaRulesAreDefaultsTheSpecOverrides) {
  const auto plain = cubind::spec::parse(kLibrary, "c.toml");
  EXPECT_EQ(plain.conventions.version_suffix, "_v[0-9]+");
  EXPECT_TRUE(plain.conventions.abi_prototype.empty());
  EXPECT_TRUE(plain.conventions.default_stream_flags.empty());
  const auto own = cubind::spec::parse(kLibrary +
                                           "[loader]\nenv_var = \"C_LIB\"\nproc_address_function = \"cGetProc\"\n"
                                           "abi_typedefs_headers = [\"cTypedefs.h\"]\n"
                                           "[conventions]\nversion_suffix = \"_V[0-9]+\"\n"
                                           "abi_prototype = \"FN_(\\\\w+)_([0-9]+)\"\n"
                                           "default_stream_flags = { legacy = 4, per-thread = 8 }\n",
                                       "c.toml");
  EXPECT_EQ(own.conventions.version_suffix, "_V[0-9]+");
  EXPECT_EQ(own.conventions.abi_prototype, "FN_(\\w+)_([0-9]+)");
  EXPECT_EQ(own.conventions.default_stream_flags.at("legacy"), 4);
  EXPECT_EQ(own.conventions.default_stream_flags.at("per-thread"), 8);
}

TEST(SpecLoader, AKeyOfAnotherNameIsRefusedByName) {
  // abi_typedefs_header, singular, was renamed: it is not dropped without a word.
  const std::string text = kLibrary + "[loader]\nenv_var = \"C_LIB\"\nabi_typedefs_header = \"cTypedefs.h\"\n";
  try {
    cubind::spec::parse(text, "c.toml");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("loader.abi_typedefs_header: not a loader key"), std::string::npos)
        << e.what();
  }
}

TEST(SpecConventions, ProcAddressAndAbiTypedefsNeedTheirConventions) {
  EXPECT_THROW(
      cubind::spec::parse(kLibrary + "[loader]\nenv_var = \"C_LIB\"\nproc_address_function = \"cGetProc\"\n", "c.toml"),
      std::runtime_error);
  EXPECT_THROW(cubind::spec::parse(kLibrary + "[loader]\nenv_var = \"C_LIB\"\nabi_typedefs_headers = [\"cTypedefs.h\"]\n",
                                   "c.toml"),
               std::runtime_error);
}

// The declarative per-library spec (bindings/<library>.toml): everything that
// differs between NVRTC, the driver and the runtime lives here, not in C++.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "spec/package.hpp"

namespace cubind::spec {

struct ParamOverride {
  std::string function;
  std::string param;
  // The parameter's names in other versions' headers (`other_names`:
  // cuDevSmResourceSplitByCount's `remaining` is `remainder` in CUDA 13.5):
  // the override applies under any of them.
  std::vector<std::string> other_names;
  // A parameter some versions' headers lack (`optional = true`); any other
  // override naming a parameter the function does not have fails the
  // generation, so that a rename is not silently ignored.
  bool optional = false;
  std::optional<model::Direction> direction;
  std::optional<model::Role> role;
  std::string count_param;
  std::optional<int> count_offset;
  std::string query_function;
  std::string userdata_param;
  bool called_once = false;
  // Callbacks that can report failure: what the binding returns to C when
  // the Python callable raises (NVRTC's flow callback: 1 cancels).
  std::optional<int64_t> on_error_return;
  // attribute_out/attribute_in: the parameter holding the attribute whose
  // value type (attribute_types) the void* carries.
  std::string attribute_param;
  // The function releasing what the call returns (`kept_until =
  // "cuLinkDestroy"`): the objects this parameter points C at stay alive
  // until then, since the library keeps writing there.
  std::string kept_until;
  // Another handle class the parameter takes as it is, where the header's
  // text does not say so (conventions.also_accepts reads it where it does).
  std::string also_accepts;
  // out_bytes: the number of bytes the call writes.
  std::optional<int64_t> size;
  // out_array_sized: the integer output counting the items the call wrote.
  std::string written_param;

  bool names(const std::string& name) const;
};

// The C type of the value one member of an attribute enum reads or writes
// (`[attribute_types.<enum>]`, from the header's documentation): a type name
// the headers declare or a C builtin; "T[]" for an array filling the size
// the caller gives.
// A record's pointer field that points to an array counted by a sibling
// field (`[fields.<record>.<field>] count_field = "..."`), one holding a
// launch's kernel arguments (`role = "kernel_params"`), or a char array read
// otherwise than the library's convention (`role = "string"`: up to its
// first NUL, as cudaDeviceProp.name; `role = "bytes"`: all of it).
struct FieldCount {
  std::string record;
  std::string field;
  std::string count_field;
  std::string role;  // "kernel_params", "string", "bytes" or empty
};

struct AttributeType {
  std::string enum_name;
  std::string member;
  std::string type;
};

// A name rewritten by an ECMAScript regex: `fGetPTX` -> `fGetPTXSize`.
struct Rewrite {
  std::string match;
  std::string replace;  // $1... refer to match's groups
};

// A handle of another type a parameter also takes where the function's
// documentation says so: cuda.h's "passing it to the API by casting to
// ::CUfunction" lets a CUkernel stand for a CUfunction.
struct AlsoAccepts {
  std::string type;              // the other handle type (CUkernel)
  std::string when_doc_matches;  // ECMAScript regex searched in the function's doc text
};

// A result type that holds either a status or a request (UCX's
// ucs_status_ptr_t): NULL is the success member, values from `first_error`
// (a member of the status enum, as an address) up are that status, any other
// value is a request still in progress, whose status is `pending`.
struct StatusPointer {
  std::string type;
  std::string first_error;
  std::string pending;
};

// A library's naming conventions, which the general parameter rules read.
struct Conventions {
  // What a struct's char array holds unless its field says otherwise
  // ([fields] role): "bytes" (all of it, NULs included: CUDA's uuid bytes,
  // luid, IPC handles, padding) or "string" (text up to its first NUL:
  // NVML's names, bus ids, versions).
  std::string char_arrays = "bytes";
  // An integer parameter counts an array when its name starts with one of
  // these prefixes followed by a capital (`numOptions`, `nDims`), ends with
  // one of the suffixes (`elementCount`), or is one of the names.
  std::vector<std::string> count_prefixes;
  std::vector<std::string> count_suffixes;
  std::vector<std::string> count_names;
  // The sibling function giving a char* buffer's byte size, and the one
  // giving an output array's element count.
  std::optional<Rewrite> size_query;
  std::optional<Rewrite> count_query;
  // The integer parameter that gives a char* output's length.
  std::vector<std::string> length_params;
  // The integer parameter that gives, in bytes, what the call reads from or
  // writes to every void* of its function (`cuMemcpyHtoD(dst, srcHost,
  // ByteCount)`): a buffer object given there must hold that many bytes.
  // Exact names: a `size` that sizes a device range, not the void*, is left
  // out of the library's list (and the one function that needs it says so).
  std::vector<std::string> byte_count_params;
  // How a header's doc comment words an output it does not annotate [out]
  // (ECMAScript regexes matching the start of a one-line text up to a word
  // boundary, case-insensitively).
  std::vector<std::string> output_wording;
  // How a header's doc comment words an array the call takes NULL for, its
  // count notwithstanding (cuda.h's "Optional edge data ... If NULL, the data
  // is assumed to be default"): regexes matching the start of the text, as above.
  std::vector<std::string> optional_wording;
  // Where an option enum's member documents the type of its value
  // (cuda.h's "Option type: unsigned int"): a regex whose first group is it.
  std::string option_type_wording;
  // A header that declares each function twice, an inline wrapper and the
  // versioned ABI symbol it forwards to (nvJitLink.h: nvJitLinkCreate calls
  // __nvJitLinkCreate_13_0): the rewrite of the wrapper's name is a regex
  // the ABI symbol's name matches. The wrapper is bound, calling that symbol.
  std::optional<Rewrite> abi_symbol;
  // Versioned structs the caller must stamp with their version before a call
  // (NVML's nvmlMemory_v2_t, whose `version` must be nvmlMemory_v2): the
  // rewrite maps a record's name (or another name of it) to the constant
  // holding its version, `struct_version_field` names the field it goes in.
  std::optional<Rewrite> struct_version;
  std::string struct_version_field;
  // The names of the ABI typedefs header's prototypes (loader
  // abi_typedefs_headers, which needs it): group 1 the function, group 2 the
  // version.
  std::string abi_prototype;
  // The suffix of a versioned name (`X_v2`): a record is named by its
  // unversioned typedef, an integer handle covers its versioned typedefs.
  std::string version_suffix = R"(_v[0-9]+)";
  // The member of an enum that reports a failure the binding raises (a
  // Python callback's exception, the C layer's "check for an exception"
  // value), by enum name; an enum not named here: its largest member.
  std::map<std::string, std::string> failure_members;
  // The member of the status enum a function whose C return is not a status
  // returns first (the classic convention: `err, name =
  // cudaGetErrorName(e)` gives cudaSuccess); empty: the member of value 0.
  std::string success_member;
  // The proc-address function's flags for each CUBIND_DEFAULT_STREAM mode
  // (needed with loader.proc_address_function).
  std::map<std::string, int64_t> default_stream_flags;
  // Handle parameters that also take another handle type, by the parameter's
  // handle type (CUfunction), where the documentation says so.
  std::map<std::string, AlsoAccepts> also_accepts;
  std::optional<StatusPointer> status_pointer;
  // Void functions declared noexcept in the C layer (`noexcept_void = true`):
  // Cython checks for an exception after a void call only by taking the
  // GIL, which a caller without it (UCX's data path, holding its own lock)
  // must not wait for. The C layer then has load(), which opens the library
  // and raises its loader's error; the Python layer's void functions call it
  // first.
  bool noexcept_void = false;
};

struct Skip {
  std::string pattern;  // ECMAScript regex matched against the whole function name
  std::string reason;
};

// NVIDIA's C-level module of this library (cuda.bindings.cydriver), served by
// a module of the package (`[compat]`): each bound function exported in its
// `__pyx_capi__` under the signature text NVIDIA's declaration gives it.
struct Compat {
  std::string module;  // the module of the package serving it ("_cydriver"); empty: none
  std::string serves;  // NVIDIA's dotted name ("cuda.bindings.cydriver")
  // NVIDIA's exception value for a function returning the status: what its
  // consumers compare the result with before they look for an exception.
  // Empty: NVIDIA declares `except *` (cuFile's calls return a struct).
  std::string error_value;
  // Types NVIDIA declares in its own module (a ctypedef, not an extern
  // name), which Cython spells `__pyx_t_<module>_<name>` (GL's GLuint).
  std::vector<std::string> module_types;
  // A type NVIDIA declares otherwise than the header writes it (`ssize_t`
  // as Py_ssize_t): header name -> NVIDIA's.
  std::map<std::string, std::string> type_spellings;
  // Also export each function under the ABI symbol its name stands for
  // (NVML's nvmlDeviceGetCount_v2), as NVIDIA's module names it.
  bool abi_names = false;
  // The Cython types NVIDIA's declarations take from Cython's own .pxd
  // files (`off_t` from posix.types, `bool` from libcpp), which the .pxd for
  // source consumers cimports as NVIDIA's does: module -> names.
  std::map<std::string, std::vector<std::string>> cimports;
};

struct Spec {
  std::string library;    // Python package ("nvrtc")
  std::string c_module;   // Cython C layer inside the package ("cnvrtc")
  std::string py_module;  // Python layer inside the package ("_nvrtc")
  // The stubs' file in the package: the package's own (__init__.pyi) where
  // the package re-exports the Python layer, else the module's.
  std::string stub = "__init__.pyi";
  std::vector<std::string> headers;
  // Headers the library's umbrella header includes with a macro defined
  // (`internal_macro`): included directly they warn (CUDA's
  // driver_functions.h, through crt/host_defines.h), so the C layer includes
  // them as the umbrella does.
  std::vector<std::string> internal_headers;
  std::string internal_macro;
  // Headers a spec header needs before it but does not include itself
  // (VDPAU's vdpau/vdpau.h before cudaVDPAU.h; GL/gl.h before
  // cuda_gl_interop.h, which on Arm requires it): parsed and included first,
  // never bound.
  std::vector<std::string> prelude_headers;
  std::string status_type;  // the enum every call returns ("nvrtcResult")
  // Where the calls return a struct holding the status enum instead of the
  // enum (cufile.h's CUfileError_t {CUfileOpError err; CUresult cu_err;},
  // returned by value): that struct and its member of status_type. Python
  // receives the member, a status_type like every other library's. Empty: none.
  std::string status_record;
  std::string status_member;
  // The bound function giving a status's text ("cuGetErrorString"): the
  // status enum's `_describe_()` calls it, which the floor's CUDAError asks
  // for its message (the floor imports no generated package). Empty: none.
  std::string status_description;
  std::string version_header;
  std::string version_macro;
  std::vector<std::string> clang_args;
  std::vector<std::string> integer_handles;  // integer typedefs bound as handle classes
  // Typedefs of void* bound as handle classes (EGL's EGLImageKHR, declared
  // in a header outside `headers`, which only the uses name).
  std::vector<std::string> void_handles;
  // Integer typedefs of a header outside `headers` (GL's GLuint, EGL's
  // EGLint, VDPAU's VdpDevice), which only the uses name: declared in the C
  // layer by their integer type, so that integer_handles can name them.
  std::vector<std::string> foreign_typedefs;
  // Handles of a header outside `headers` (cuda.h's CUstream, which
  // cufile.h's stream functions take), each with its struct's tag
  // ("CUstream_st"): declared in the C layer and bound as a handle class
  // whose objects the other modules' classes of that tag (cuda.CUstream) take.
  std::vector<std::pair<std::string, std::string>> foreign_handles;
  // Structs of a header outside `headers` (<time.h>'s struct timespec,
  // <sys/socket.h>'s sockaddr through cufile.h's typedef sockaddr_t), which
  // only the uses name: declared in the C layer without their fields (an
  // opaque class of their name, passed by address).
  std::vector<std::string> foreign_records;
  // Function types of a header outside `headers` taken by pointer (VDPAU's
  // `VdpGetProcAddress *`): handle classes holding the function's address,
  // as void_handles hold a void*.
  std::vector<std::string> function_handles;
  // The headers that spell this library's enums a second time (the driver's
  // cuda.h for the runtime's driver_types.h, and back): each enum whose
  // members match one of theirs by value and by name is its twin
  // (passes: find_twin_enums), whose members the bindings take as its own.
  std::vector<std::string> twin_headers;
  // Loader
  // The loader's cache key and the name its errors use; two libraries of one
  // package (the driver and the runtime, both in `cuda`) need their own.
  std::string loader_name;
  std::vector<std::string> sonames;
  std::string env_var;
  std::vector<std::string> wheel_subdirs;
  // Directories of a toolkit root (CUDA_HOME, /usr/local/cuda) holding the
  // library; empty: the loader's own (lib64, lib).
  std::vector<std::string> toolkit_subdirs;
  // Symbols resolved through the driver's cuGetProcAddress with this version
  // (empty: plain dlsym).
  std::string proc_address_function;
  // Headers of ABI typedefs, e.g. cudaTypedefs.h and cudaGLTypedefs.h.
  std::vector<std::string> abi_typedefs_headers;
  // Suffixes of the per-thread default stream variants a dlsym'd library
  // exports (the runtime's `cudaMemcpy_ptds`, `cudaMemcpyAsync_ptsz`), tried
  // in order under CUBIND_DEFAULT_STREAM=per-thread.
  std::vector<std::string> per_thread_suffixes;
  // The status a function the loaded library lacks returns (a member of
  // status_type); empty: FunctionNotFoundError is raised.
  std::string missing_function_status;
  // Passes
  Conventions conventions;
  std::vector<ParamOverride> overrides;
  std::vector<AttributeType> attribute_types;
  // Option enums whose values travel in a void* array beside them (the JIT
  // options): each member's value type read from its doc comment
  // (conventions.option_type_wording), else given here
  // (`[option_types.CUjit_option] CU_JIT_FAST_COMPILE = "int"`). An entry
  // with an empty member only names the enum.
  std::vector<AttributeType> option_types;
  std::vector<FieldCount> field_counts;
  std::vector<Skip> skips;
  // Functions (ECMAScript regexes over the whole name) that keep the GIL
  // during the C call: they return at once, never wait on the device or on
  // another thread, and releasing the GIL would cost more than the call.
  std::vector<std::string> keep_gil;
  // Helpers the classic modules have under names of their own, each calling
  // a bound function (`[helpers] getLocalRuntimeVersion =
  // "cudaRuntimeGetVersion"`): name -> function.
  std::vector<std::pair<std::string, std::string>> helpers;
  // Functions whose C return is not a status that return their value alone
  // (`[functions.make_cudaExtent] result = "value"`), as the classic modules
  // do for the headers' inline constructors; every other such function
  // returns (success, value).
  std::vector<std::string> value_results;
  // The package's __init__.py (`[package]`).
  Package package;
  Compat compat;

  const ParamOverride* override_for(const std::string& function, const std::string& param) const;
};

// Throws std::runtime_error naming the file and the key on a malformed spec.
Spec load(const std::string& path);
Spec parse(const std::string& toml_text, const std::string& source_name);

std::optional<model::Role> role_from_string(const std::string& text);
std::optional<model::Direction> direction_from_string(const std::string& text);

}  // namespace cubind::spec

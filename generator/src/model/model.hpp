// The plain model of a C API as read from its headers. Nothing here refers to
// libclang: the parse stage fills it, passes annotate it, emit reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/conversion.hpp"
#include "model/type.hpp"

namespace cubind::model {

// What a doc comment says, with the doxygen structure kept apart.
struct DocParam {
  std::string name;
  std::string direction;  // "in", "out", "in,out" or "" when not annotated
  std::string text;
};

struct Doc {
  std::string brief;
  std::string body;  // everything but brief, params and return
  std::vector<DocParam> params;
  std::string returns;

  bool empty() const { return brief.empty() && body.empty() && params.empty() && returns.empty(); }
  const DocParam* param(const std::string& name) const;
};

// How a parameter crosses the Python boundary; decided by passes.
enum class Direction { In, Out, InOut };

// Every role, once: the enum, its text (--dump-model, the spec's `role =`)
// and the spec parser all read this table.
#define CUBIND_ROLES(X)                                                                                              \
  X(Unresolved, "unresolved")                                                                                        \
  X(Scalar, "scalar")              /* integer, float, bool by value */                                               \
  X(Enum, "enum")                  /* enum by value */                                                               \
  X(Handle, "handle")              /* opaque handle by value */                                                      \
  X(Record, "record")              /* struct by value */                                                             \
  X(String, "string")              /* const char* */                                                                 \
  X(StringArray, "string_array")   /* const char* const* with a count parameter */                                   \
  X(Array, "array")                /* const T* with a count parameter */                                             \
  X(Count, "count")                /* the integer that counts an Array/StringArray */                                \
  X(Buffer, "buffer")              /* caller-provided char* filled by the call, size from a query function */        \
  X(VoidPtr, "void_ptr")           /* void* / const void* input; a const char* read for its length in bytes */       \
  X(Callback, "callback")          /* function pointer */                                                            \
  X(UserData, "user_data")         /* void* handed back to a Callback */                                             \
  X(OutScalar, "out_scalar")       /* T* written by the call (integer, float, enum, handle) */                       \
  X(OutString, "out_string")       /* const char** written by the call */                                            \
  X(OutArray, "out_array")         /* T* filled with a count known from a query function */                          \
  X(InOutHandle, "inout_handle")   /* handle* read and written by the call */                                        \
  X(RecordIn, "record_in")         /* const struct* (or a struct* the call only reads); None passes NULL */          \
  X(RecordOut, "record_out")       /* struct* the call fills: a new object is returned */                            \
  X(OutAddress, "out_address")     /* void** written by the call: an int address is returned */                      \
  X(OutBuffer, "out_buffer")       /* char* filled by the call with a length parameter: bytes are returned */        \
  X(KernelParams, "kernel_params") /* void** of kernel arguments (cuLaunchKernel): the four forms of API.md */       \
  X(InOutArray,                                                                                                      \
    "inout_array") /* T* the call fills up to a capacity the caller gives in its count: a list is returned */        \
  X(InOutCount, "inout_count") /* the size_t* capacity of an InOutArray, which the call overwrites with the count */ \
  X(AttributeOut,                                                                                                    \
    "attribute_out") /* void* the call writes with the value of an attribute: returned typed by the attribute */     \
  X(AttributeIn,                                                                                                     \
    "attribute_in") /* void* the call reads the value of an attribute from: taken typed by the attribute */          \
  X(ReturnedArray,                                                                                                   \
    "returned_array") /* const T** the call points at an array it owns, counted by an output: a list is returned */  \
  X(AttributeSize,                                                                                                   \
    "attribute_size") /* size_t* the call reads as the size of an attribute's value (and may overwrite): hidden */   \
  X(OptionValues,                                                                                                    \
    "option_values") /* void** values of the options in a sibling array: each converted as its option says */        \
  X(InOutScalar, "inout_scalar") /* T* the call reads and overwrites (a mode swapped): taken and returned */         \
  X(OutBytes, "out_bytes")       /* char* the call fills with the spec's `size` bytes (no length): bytes returned */ \
  X(OutArraySized, "out_array_sized") /* T* filled up to a capacity given by value, the count in an output */

enum class Role {
#define CUBIND_ROLE_ENUM(name, text) name,
  CUBIND_ROLES(CUBIND_ROLE_ENUM)
#undef CUBIND_ROLE_ENUM
};

struct Param {
  std::string name;
  Type type;
  // The name Python and Cython code spell (passes: name_python): `name`, or
  // `from_` for a keyword, `bytes_` for a Cython type name.
  std::string py_name;
  // Filled by passes. The role facts below (count_param to attribute_param)
  // are stored here only: the parameter pass decides them (with the spec's
  // overrides), the conversion pass and emit read them from the Param.
  Direction direction = Direction::In;
  Role role = Role::Unresolved;
  // Array/StringArray/InOutArray/ReturnedArray: the parameter counting it;
  // OutBuffer: its length; VoidPtr: the bytes the call reads or writes there;
  // AttributeOut: the bytes of the value (an array of values: the array of
  // each one's size).
  std::string count_param;
  int count_offset = 0;         // items = count_param + count_offset (strides: rank - 1)
  std::string query_function;   // Buffer/OutArray/VoidPtr: the function giving the size/count
  std::string userdata_param;   // Callback: the void* it receives back
  bool called_once = false;     // Callback: C calls it once, then forgets it
  std::string on_error_return;  // Callback: returned to C when the Python callable raises (spec)
  std::string attribute_param;  // AttributeOut/In: the parameter holding the attribute
  // Handle: another handle class it also takes, where the function's doc says
  // so (spec conventions.also_accepts: a CUkernel cast to CUfunction).
  std::string also_accepts;
  // Array: None (NULL) is taken whatever its count says (mark_optional_arrays).
  bool optional = false;
  // OutBytes: how many bytes the call writes (the spec's `size`; the header
  // says it only in words: cuDeviceGetLuid's 8-byte LUID).
  int64_t fixed_size = -1;
  // OutArraySized: the integer output the call writes its count of items to
  // (cuGLGetDevices' pCudaDeviceCount; the capacity is count_param).
  std::string written_param;
  std::string skip_reason;  // non-empty when this parameter cannot be bound
  Conversion conversion;    // how it crosses into C (conversion pass)
  // The Python default of an input, as the classic bindings give it (passes:
  // mark_classic_defaults); empty: the caller must pass it.
  std::string py_default;
  // What the call keeps pointing at after it returns (cuLinkCreate's log
  // buffers, which the driver writes until cuLinkDestroy): the function
  // releasing it (spec `kept_until`) and the output handle that owns it
  // until then (passes: link_kept_alive).
  std::string kept_until;
  std::string kept_by;
  // The name the declaration writes for its type where a `#define` stands
  // for the type clang reads (`cudaStreamAttrID attr`, which the macro makes
  // cudaLaunchAttributeID): NVIDIA's signature text spells it. Empty: none.
  std::string written_name;
};

struct Function {
  std::string name;
  Type result;
  std::vector<Param> params;
  Doc doc;
  std::string header;
  // A static inline definition in the header (driver_functions.h's
  // make_cudaPos): compiled into the C layer from the header, not looked up
  // in the library, which has no such symbol.
  bool header_only = false;
  // Filled by passes:
  bool returns_status = false;  // result is the library's status enum
  // Where the result is the spec's status_record holding the status (cuFile's
  // CUfileError_t): the member the status is read from ("err"), and its type
  // (the status enum). Empty: the result is the status itself, or no status.
  std::string status_field;
  Type status_field_type;
  // Where the result is not the status: the status member Python receives
  // first, before the value (`(success, value)`, the classic convention).
  std::string success_status;
  // Where the result is not the status: returned alone, without the status
  // (spec `result = "value"`: make_cudaExtent(w, h, d) is the struct itself).
  bool value_only = false;
  // Where the result is the spec's status pointer (UCX's ucs_status_ptr_t):
  // the status enum it holds, and the values of its first error and of its
  // pending member (mark_status_pointers). Python receives (status, request).
  // A void function the C layer declares noexcept (conventions.noexcept_void):
  // its Python function opens the library first, which raises where it fails.
  bool loads_first = false;
  std::string status_pointer_enum;
  int64_t status_pointer_first_error = 0;
  int64_t status_pointer_pending = 0;
  std::string skip_reason;
  std::string alias_of;  // the ABI symbol called, when an alias maps the name
  // The name the library's version resolver knows the ABI by, where it is not
  // `name` (cuGraphInstantiate is cuGraphInstantiateWithFlags); empty: `name`.
  std::string proc_name;
  // The version of the function's ABI that matches this declaration, where
  // the library resolves by version (the driver's cuGetProcAddress); 0: none.
  int abi_version = 0;
  // The canonical parameter types, compared with the ABI prototypes (parse).
  std::string abi_signature;
  // Whether the call runs with the GIL released (the spec keeps it for
  // calls that cannot block).
  bool releases_gil = true;
  // The parameter whose handle this call releases, with what other calls
  // kept alive for it (passes: link_kept_alive); empty: none.
  std::string releases_kept;
  // How the C result reaches Python (the status enum, a value, bytes...),
  // with the error value by which the C layer signals an exception.
  Conversion result_conversion;
  // The function under NVIDIA's C-level module (spec [compat], passes:
  // spell_compat_signatures): the signature text a consumer compiled against
  // NVIDIA's module looks its capsule up by, the exception clause of
  // NVIDIA's declaration, and the names it is exported under. Empty: none.
  std::string compat_signature;
  std::string compat_exception;
  std::vector<std::string> compat_names;
  // How the .pxd for source consumers declares it so that Cython spells
  // exactly that text: the result's and each parameter's Cython type.
  std::string compat_result_declaration;
  std::vector<std::string> compat_param_declarations;
};

struct EnumValue {
  std::string name;
  int64_t value = 0;
  Doc doc;
};

struct Enum {
  int order = 0;     // position in the headers: C declarations are emitted in it
  std::string name;  // typedef name, else tag
  std::string tag;
  bool is_signed = true;
  std::vector<EnumValue> values;
  Doc doc;
  std::string header;
  // The member that reports a failure (passes): returned to C when a Python
  // callback raised, and the C layer's error value.
  std::string failure_member;
  // Other names bound to this class (name_type_aliases: CUstreamAttrID).
  std::vector<std::string> aliases;
  // The enums of the spec's twin_headers spelling the same C enum
  // (find_twin_enums: cudaDeviceAttr for CUdevice_attribute): a parameter
  // of one of them takes this enum's members too.
  std::vector<std::string> twins;
  // The status enum's describing function (mark_status_description: the
  // spec's status_description, checked to take one status and be bound).
  std::string description_function;
};

struct Field {
  std::string name;  // empty for an anonymous member
  Type type;
  int bit_width = -1;
  int64_t offset_bits = -1;
  Doc doc;
  // The property's name (passes: name_python), as Param::py_name; and the C
  // name as a second property where the two differ and Python can spell it
  // (`uuid.bytes` beside `uuid.bytes_`), else empty.
  std::string py_name;
  std::string py_alias;
  // A pointer to an array whose length is another field of the record
  // (spec [fields]: CUDA_CONDITIONAL_NODE_PARAMS.phGraph_out by size).
  std::string count_field;
  // Holds a launch's kernel arguments (spec [fields] role = "kernel_params"):
  // it takes every form cuLaunchKernel's kernelParams takes.
  bool kernel_params = false;
  // A char array read as text up to its first NUL, not as all its bytes
  // (passes: mark_char_strings, from the spec's conventions and [fields]).
  bool c_string = false;
  // Printed in hex by the struct's repr (`fence : 0x0`), as the classic
  // modules print a void* field (passes: mark_hex_fields).
  bool prints_hex = false;
  Conversion conversion;  // the Python property's (conversion pass); skip_reason when none
};

struct Record {
  int order = 0;            // position in the headers: C declarations are emitted in it
  std::string name;         // typedef name, tag, or synthesised for anonymous nested records
  std::string public_name;  // the class users see (passes: CUDA_MEMCPY2D for CUDA_MEMCPY2D_v2)
  // Other names of the same type users reach for: its tag and the typedefs
  // of it (CUDA_MEMCPY2D_st, CUDA_MEMCPY2D_v2, CUstreamAttrValue), bound to
  // the same class (passes).
  std::vector<std::string> aliases;
  std::string tag;
  bool is_union = false;
  bool is_complete = false;
  bool is_anonymous = false;
  std::string parent;  // enclosing record for nested definitions
  // Where C names the record before defining it (`typedef struct X_st X;`
  // long before `struct X_st {...}`, a pointer to itself among its fields):
  // the position of its forward declaration, emitted there; -1 when none.
  int forward_order = -1;
  int64_t size = -1;
  int64_t align = -1;
  std::vector<Field> fields;
  Doc doc;
  std::string header;
  // A versioned struct (mark_struct_versions): every new object has this
  // field set to this value, the constant `version_constant` of the headers.
  std::string version_field;
  std::string version_constant;
  int64_t version_value = 0;
};

struct Handle {
  int order = 0;  // position in the headers: C declarations are emitted in it
  std::string name;
  bool is_integer = false;  // an integer typedef the spec declares a handle (CUdeviceptr)
  // A function type taken by pointer (the spec's function_handles): the
  // class holds a `name *`.
  bool is_function = false;
  std::string record_tag;
  // Other names bound to this class (name_type_aliases: CUdevice_v1).
  std::vector<std::string> aliases;
  Doc doc;
  std::string header;
  // The class's own conversion: its template, and for integer handles the
  // C storage type, its range and the error value of its converter.
  Conversion conversion;
};

struct Callback {
  int order = 0;  // position in the headers: C declarations are emitted in it
  std::string name;
  Type type;  // FunctionPointer
  Doc doc;
  std::string header;
  // A Python class of this name holds a raw function pointer, as in the
  // classic modules (mark_callback_classes); else the reason it has none.
  bool has_class = false;
  std::string no_class_reason;
};

struct Typedef {
  int order = 0;  // position in the headers: C declarations are emitted in it
  std::string name;
  Type type;
  Doc doc;
  std::string header;
};

struct Constant {
  std::string name;
  std::string kind;  // "int", "float" or "string"
  int64_t int_value = 0;
  bool is_unsigned = false;
  double float_value = 0;
  std::string string_value;
  std::string header;
};

// `#define public_name target`, possibly through a one-parameter macro that
// pastes a suffix (`#define cuMemcpy __CUDA_API_PTDS(cuMemcpy)`).
struct Alias {
  std::string name;
  std::string target;
  std::string header;
};

// `PFN_<name>_v<version>` in the ABI typedefs header: the prototype a
// function had at that version.
struct AbiPrototype {
  std::string name;
  std::string signature;  // canonical parameter types, as Function::abi_signature
  int version = 0;
};

// The value one member of an attribute enum reads or writes (the spec's
// attribute_types, resolved against the headers' types).
struct AttributeValue {
  std::string member;
  int64_t value = 0;
  Type type;                // the value's type; an array's element type
  bool is_array = false;    // as many items as the size the caller gives
  int64_t string_size = 0;  // > 0: a NUL-terminated string in a char[string_size]
  // The C type the value is stored as in the table's union (conversion
  // pass): `type`, but a C bool (one byte) as an unsigned char, since a
  // Cython bint is an int.
  Type storage;
  // How Python sets it: through the element conversion `in`, or copied as
  // a NUL-terminated string into the whole buffer (fixed_string_into).
  enum class Setter { Element, FixedString } setter = Setter::Element;
  Conversion out;  // C to Python (conversion pass)
  Conversion in;   // Python to C; skip_reason where it cannot be set
};

struct AttributeTable {
  std::string enum_name;
  // The parameter name the values are taken from (AttributeIn), for errors.
  std::string value_param;
  std::vector<AttributeValue> values;
};

// How the value of one option travels in its pointer-sized slot (the JIT
// options' optionValues), from the option's documented type.
enum class OptionKind {
  Unsigned,  // "unsigned int": the integer itself in the slot
  Signed,    // "int"
  Float,     // "float": the float's bits in the slot
  Enum,      // "unsigned int for enumerated type ::X": a member of X (or an int)
  Buffer,    // "char *": a writable buffer the library writes to (a log)
  None,      // "No option value needed": the slot is not read
  Address,   // "const char **", "void **": an int address or a buffer
};

struct OptionValue {
  std::string member;
  int64_t value = 0;
  OptionKind kind = OptionKind::Address;
  std::string enum_name;  // Enum: the enum its value is a member of
};

struct OptionTable {
  std::string enum_name;
  std::vector<OptionValue> values;
};

// Where the loader finds the library and how it resolves symbols, for the
// toolkit the headers came from (loader pass).
struct Loader {
  // The spec's names with `{cuda_major}` expanded.
  std::vector<std::string> sonames;
  std::vector<std::string> wheel_subdirs;
  std::vector<std::string> toolkit_subdirs;
  // How the loader resolves the C layer's symbols (_cubind/loader.pyx,
  // resolve): "proc_address", by version through the spec's
  // proc_address_function, else "dlsym".
  std::string resolver;
};

// A type the .pxd for source consumers declares privately for its functions,
// so that Cython spells NVIDIA's text: a `name` (`_nv_GLuint`) typedef of
// cubind's type `of`, whose C name `cname` is that text. For a type NVIDIA's
// C-level module declares itself (spec compat.module_types) the text is
// Cython's C name of NVIDIA's declaration (`__pyx_t_4cuda_8bindings_8cydriver_GLuint`,
// with the keyword or the `*` the use spells), `mangled`, which a #define
// maps to the header's `c_type`; for a header type whose keyword cubind's
// declaration spells otherwise (`CUfileDescr_t`), the header's spelling.
struct CompatType {
  std::string name;
  std::string of;
  std::string cname;
  std::string mangled;
  std::string c_type;
};

struct Model {
  std::string library;
  std::vector<std::string> headers;
  // The version macro's value (CUDA_VERSION: 13000); 0 when the spec names
  // none. Printed as text by version_text().
  int cuda_version = 0;
  Loader loader;
  std::vector<Function> functions;
  std::vector<Enum> enums;
  // The enums of the spec's twin_headers, parsed beside these headers:
  // what find_twin_enums compares this library's enums with.
  std::vector<Enum> twin_candidates;
  std::vector<Record> records;
  std::vector<Handle> handles;
  std::vector<Callback> callbacks;
  std::vector<Typedef> typedefs;
  std::vector<Constant> constants;
  std::vector<Alias> aliases;
  // Other names of a bound class (`typedef CUlaunchAttributeID
  // CUstreamAttrID;`, `#define cudaStreamAttrID cudaLaunchAttributeID`,
  // `CUdevice_v1` for CUdevice), each bound to the same class: parse finds
  // the #define'd ones, name_type_aliases the typedefs, and keeps those
  // whose target has a class (the target is that class's name).
  std::vector<Alias> type_aliases;
  std::vector<AbiPrototype> abi_prototypes;
  std::vector<AttributeTable> attribute_tables;
  std::vector<OptionTable> option_tables;
  // Helpers of the classic modules calling a bound function (spec
  // [helpers], checked by bind_helpers): name -> the function's name.
  std::vector<Alias> helpers;
  std::vector<CompatType> compat_types;

  const Function* function(const std::string& name) const;
  const Enum* enumeration(const std::string& name) const;
  const Handle* handle(const std::string& name) const;
  const Record* record(const std::string& name) const;
  const Callback* callback(const std::string& name) const;
  const AttributeTable* attribute_table(const std::string& enum_name) const;
};

// 13000 -> "13.0"; 0 -> "".
std::string version_text(int version);

// The Cython name of the opaque struct a pointer handle points to (the C
// layer declares `cdef struct _CUstream_struct "CUstream_st"`): what a
// declaration names where the header writes `struct CUstream_st`.
std::string handle_struct_name(const std::string& handle);

const char* to_string(Direction direction);
const char* to_string(Role role);
const char* to_string(OptionKind kind);

}  // namespace cubind::model

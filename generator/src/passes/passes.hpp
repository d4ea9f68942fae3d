// Passes over the parsed model, run in the order pipeline.cpp lists. Each decides
// one thing and records it in the model, so --dump-model shows the result.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "spec/spec.hpp"

namespace cubind::passes {

// `#define f f_v2`: the function is bound as `f` and calls `f_v2`, at the
// ABI version whose prototype (under the name users call) matches the
// declaration. The one place the alias rule lives.
void apply_aliases(model::Model& model);
// The name a version-resolving loader (loader.proc_address_function: the
// driver's cuGetProcAddress) is asked for: the ABI symbol without its version
// suffix. `#define cuMemAlloc cuMemAlloc_v2` is asked as cuMemAlloc; but
// `#define cuGraphInstantiate cuGraphInstantiateWithFlags` renames to another
// function, asked by its own name: the driver's cuGraphInstantiate is the
// older five-parameter ABI. Nothing for a library loaded by symbol (dlsym).
void name_proc_symbols(model::Model& model, const spec::Spec& spec);
// The ABI version each function is resolved at: that of the prototype
// matching its declaration, else the headers' own version (after aliases).
// Throws where the typedefs know ABIs under the function's resolver name and
// none matches its declaration: the resolver would hand back one of those.
void choose_abi_versions(model::Model& model);
// Inline wrappers and the versioned symbols they forward to (spec
// conventions.abi_symbol): one function, bound under the wrapper's name.
void merge_abi_symbols(model::Model& model, const spec::Spec& spec);

// Other names of a class bound to the same class: a typedef of an enum
// (`typedef CUlaunchAttributeID CUstreamAttrID;`), a versioned typedef of an
// integer handle (`CUdevice_v1`), a `#define` naming a type (the runtime's
// `#define cudaStreamAttrID cudaLaunchAttributeID`, parse's type_aliases);
// those naming no class, or a name the module already has, stay unbound.
void name_type_aliases(model::Model& model, const spec::Spec& spec);
// Public names of records (unversioned typedefs) and integer handles.
void name_public_records(model::Model& model, const spec::Spec& spec);
// Versioned structs (the spec's struct_version): each record one of whose
// names the rewrite maps to an integer constant of the headers, and which
// has the spec's struct_version_field, gets that constant's value to stamp
// in every new object of its class.
void mark_struct_versions(model::Model& model, const spec::Spec& spec);
// The spec's foreign_typedefs (GL's GLuint): integer typedefs of a header
// outside the spec's, declared in the model by their integer type where a
// use names them, so that mark_integer_handles can bind them.
void declare_foreign_typedefs(model::Model& model, const spec::Spec& spec);
void mark_integer_handles(model::Model& model, const spec::Spec& spec);
// Which function-pointer typedefs get a Python class of their name holding
// a raw function pointer (the classic modules' `CUhostFn(addr)`): every one
// whose name no other class, function or constant of the module takes.
void mark_callback_classes(model::Model& model);
// A pointer to a handle's struct spelled by its tag (cuda_egl_interop.h's
// `struct cudaGraphicsResource **pCudaResource`) is typed as the handle, so
// the parameter rules see a handle (an output here) as for its typedef.
void name_tagged_handles(model::Model& model);
// The twins of each enum among the enums of the spec's twin_headers (one C
// enum the runtime and the driver each spell: cudaDeviceAttr and
// CUdevice_attribute): the smaller's values are all the larger's, and more
// than half of the smaller's members match a member of the same value by
// name, once each enum's common prefix, underscores and case are dropped
// (cudaDevAttrMaxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK).
void find_twin_enums(model::Model& model);
// The spec's void_handles (EGL's EGLImageKHR, a typedef of void* in a header
// outside the spec's): each use is typed as a handle of that name, and the
// handle declared, so the functions take a handle class as the classic
// bindings do, not an address or buffer.
void mark_void_handles(model::Model& model, const spec::Spec& spec);
// Python's names for parameters and fields (Param::py_name, Field::py_name,
// Field::py_alias): C names that are Python keywords or Cython type names get
// a trailing underscore (python_name), others are kept.
void name_python(model::Model& model);
std::string python_name(const std::string& c_name);
bool is_python_keyword(const std::string& name);
// The member of each enum that reports a failure (spec
// conventions.failure_members, else the largest).
void mark_failure_members(model::Model& model, const spec::Spec& spec);
// Pointer fields counted by a sibling field, and those holding kernel
// arguments (spec [fields]).
void apply_field_counts(model::Model& model, const spec::Spec& spec);
// Each char array field's reading (text to its first NUL, or all its
// bytes) by the spec's conventions.char_arrays; apply_field_counts, after it,
// applies a field's own role.
void mark_char_strings(model::Model& model, const spec::Spec& spec);
bool is_char_array(const model::Type& t);
// The fields a struct's repr prints in hex (Field::prints_hex): those of
// type void*, and fixed arrays of them, as the classic modules print them.
void mark_hex_fields(model::Model& model);

// The spec's attribute_types resolved against the headers' types; then, once
// roles are known, each attribute-typed value linked to its table.
std::optional<model::Type> type_named(const model::Model& model, const std::string& name);
void resolve_attribute_types(model::Model& model, const spec::Spec& spec);
void link_attributes(model::Model& model);

// After the roles: the output handle owning what a parameter keeps pointing
// at (spec kept_until), and the function releasing it.
void link_kept_alive(model::Model& model);

// The option enums' value kinds (spec option_types, the members' doc
// comments), and the void* arrays carrying their values.
void resolve_option_types(model::Model& model, const spec::Spec& spec);
void link_option_values(model::Model& model);
const model::Param* attribute_param_of(const model::Function& f, const model::Param& p);
const model::AttributeTable* attribute_table_of(const model::Model& model, const model::Function& f,
                                                const model::Param& p);

// Role and direction of every parameter: general rules, then the spec's overrides.
void infer_parameters(model::Model& model, const spec::Spec& spec);

// Handle parameters that also take another handle class where their
// function's doc says so (spec conventions.also_accepts), after the roles.
void accept_documented_casts(model::Model& model, const spec::Spec& spec);

// Marks functions the binding cannot or must not bind, with the reason.
void apply_filters(model::Model& model, const spec::Spec& spec);

// Drops `typedef enum X X;` and `typedef struct X X;`: the C layer already
// declares the tag X as a type (`cdef enum X`), and Cython warns at a second
// declaration of the name ("'cudaDataType_t' redeclared").
void drop_tag_typedefs(model::Model& model);

// The status member returned first by each function whose C return is not a
// status (spec conventions.success_member, else the status enum's member of
// value 0): every call returns a tuple led by a status, but those the spec
// says return their value alone (`result = "value"`: the headers' inline
// constructors, as in the classic modules), which get none.
void mark_success_status(model::Model& model, const spec::Spec& spec);
// The spec's status_description, checked to be a bound function of one
// parameter of the status type, recorded on the status enum.
// Functions returning the spec's status pointer (conventions.status_pointer):
// its enum and members' values, and the pair as their value.
void mark_status_pointers(model::Model& model, const spec::Spec& spec);
void mark_status_description(model::Model& model, const spec::Spec& spec);

// After the conversions: the Python defaults of the classic bindings (an
// in/out count at the end of the inputs defaults to 0, asking for the count).
void mark_classic_defaults(model::Model& model, const spec::Spec& spec);

// The spec's [helpers], each checked to name a function that is bound.
void bind_helpers(model::Model& model, const spec::Spec& spec);

// Which calls keep the GIL (spec [gil] keep); every other call releases it.
void mark_gil(model::Model& model, const spec::Spec& spec);
// Void functions noexcept in the C layer, their Python functions loading the
// library first (conventions.noexcept_void); after assign_conversions.
void mark_noexcept_void(model::Model& model, const spec::Spec& spec);

// The conversion of every parameter, field, result and callback argument
// (after the roles and the filters: skipped functions get none).
void assign_conversions(model::Model& model);
model::Conversion field_conversion(const model::Field& field, const model::Model& model);
// The C layer's name for the type of an unnamed function pointer parameter.
std::string callback_typedef_name(const std::string& function, const std::string& param);

// A loader name of the spec (soname, wheel folder) for this toolkit:
// `{cuda_major}` becomes the headers' major version (12090 -> "12").
std::string expand_loader_name(const std::string& pattern, int cuda_version);
std::vector<std::string> expand_loader_names(const std::vector<std::string>& patterns, int cuda_version);
// The model's loader: the spec's names expanded, the resolver chosen.
void resolve_loader(model::Model& model, const spec::Spec& spec);

// NVIDIA's C-level module (spec [compat]): for each bound function, the
// signature text NVIDIA's declaration makes Cython name its capsule with
// (`CUresult (CUstream, CUevent, unsigned int)`), NVIDIA's exception clause,
// and the names it is exported under.
void spell_compat_signatures(model::Model& model, const spec::Spec& spec);
// Its parts: Cython's C name of a type declared in `module`
// (`__pyx_t_4cuda_8bindings_8cydriver_GLuint`), how NVIDIA's text spells one
// type (`written_name`: the name the declaration wrote, see Param), the whole
// text, and the exception clause.
std::string cython_module_type(const std::string& module, const std::string& name);
std::string compat_type_text(const model::Type& type, const std::string& written_name, const spec::Spec& spec);
std::string compat_signature(const model::Function& f, const spec::Spec& spec);
std::string compat_exception(const model::Function& f, const spec::Compat& compat);
// How the .pxd for source consumers declares one type so that Cython spells
// compat_type_text's text: `const` first, no `struct`/`enum` keyword, a
// module type by its private type (added to model.compat_types).
std::string compat_type_declaration(model::Model& model, const model::Type& type, const std::string& written_name,
                                    const spec::Spec& spec);

// Every pass, in the order of passes/pipeline.cpp.
void run_passes(model::Model& model, const spec::Spec& spec);
std::vector<std::string> pass_names();

}  // namespace cubind::passes

// Records (structs and unions): their C-layer declarations and the Python
// classes that wrap them, one property per field.
#pragma once

#include <string>

#include "emit/params.hpp"

namespace cubind::emit {

// The Python class of a record entity (its public name).
std::string record_class(const model::Model& model, const std::string& record_name);

// The C type of a record as C can name it, `__typeof__` for anonymous nested ones.
std::string record_c_spelling(const model::Model& model, const model::Record& r);

// An anonymous member (`union { int a; float b; };`): its fields belong to the
// enclosing record, so it has no declaration or class of its own.
bool is_anonymous_member(const model::Model& model, const model::Record& r);

Data c_record_view(const model::Record& r, const Context& ctx);
Data py_record_view(const model::Record& r, const Context& ctx, const Templates& templates);

}  // namespace cubind::emit

// Records (structs and unions): their C-layer declarations and the Python
// classes that wrap them, one property per field.
#pragma once

#include <string>

#include "emit/context.hpp"

namespace cubind::emit {

// An anonymous member (`union { int a; float b; };`): its fields belong to the
// enclosing record, so it has no declaration or class of its own.
bool is_anonymous_member(const model::Model& model, const model::Record& r);

View c_record_view(const model::Record& r, const Context& ctx);
// The forward declaration of a record C names before defining it, with its typedef.
View c_record_forward_view(const model::Record& r);
View py_record_view(const model::Record& r, const Context& ctx);

}  // namespace cubind::emit

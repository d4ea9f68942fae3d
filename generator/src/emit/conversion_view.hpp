// A conversion as its template sees it: each typed fact of model::Conversion
// becomes the keys its templates render, with nothing decided here.
#pragma once

#include <string>

#include "emit/context.hpp"

namespace cubind::emit {

// `name` is the Python name of the value (parameter, field, argument).
View conversion_view(const model::Conversion& c, const std::string& name, const Context& ctx);

// A parameter's conversion with the Param's role facts: the parameter
// counting it (`count`, `count_cname`, `offset_op`), its size query, the
// attribute typing it (and the count of an attribute array), its user data.
View param_view(const model::Function& f, const model::Param& p, const Context& ctx);

// The conversion's template rendered for one slot of the function or class
// that uses it: "pre" (statements), "arg"/"ret"/"item" (expressions), "stub"
// (its .pyi type), "stub_set" (a field's setter type); a field array's item
// also "get"/"set" (the expressions reading and writing item i in place).
View slot(const model::Conversion& c, const View& view, const std::string& slot, const std::string& label,
          const Context& ctx, const std::vector<const Data*>& parents = {});

}  // namespace cubind::emit

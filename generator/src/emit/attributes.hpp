// Values typed by an attribute: the helpers each attribute table becomes
// (its storage union, the size, value and store functions) and the names
// the parameter templates call them by.
#pragma once

#include <string>

#include "emit/context.hpp"

namespace cubind::emit {

struct AttributeNames {
  std::string union_name, size_of, value_of, store;
};
AttributeNames attribute_names(const std::string& enum_name);

// The .pyi type of a table's values, read (`out`) or set.
std::string attribute_value_stub(const model::AttributeTable& table, bool out, const Context& ctx);

// The table's helpers, rendered by attribute_table.pyx.
View attribute_table_code(const model::AttributeTable& table, const Context& ctx);

// The function converting one option's value into its slot, and its code.
std::string option_value_function(const std::string& enum_name);
View option_table_code(const model::OptionTable& table, const Context& ctx);

}  // namespace cubind::emit

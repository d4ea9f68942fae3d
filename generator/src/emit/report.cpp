#include "emit/report.hpp"

#include <cstdio>

namespace cubind::emit {

namespace {
// What a buffer object given to the call must hold, and whether the call
// writes there (then it must be writable): the reviewer of a new toolkit sees
// which pairings the rules made, which buffers stay unchecked (a missing
// byte_count_params name shows up here) and which non-const void* the call
// would write (one it only reads needs the spec's `direction = "in"`).
std::string buffer_line(const model::Function& f, const model::Param& p) {
  std::string holds;
  if (!p.query_function.empty()) {
    holds = "holds what " + p.query_function + " gives";
  } else if (!p.count_param.empty()) {
    holds = "holds " + p.count_param + " bytes";
  } else {
    holds = "unchecked: no byte count or size query";
  }
  if (p.direction == model::Direction::Out) holds += ", written by the call";
  return "  buffer   " + f.name + "." + p.name + ": " + holds + "\n";
}

bool is_buffer(const model::Param& p) {
  return (p.role == model::Role::VoidPtr || p.role == model::Role::Buffer) && p.conversion.bound();
}

std::string percent(size_t part, size_t whole) {
  char buffer[16];
  snprintf(buffer, sizeof buffer, "%.1f%%", whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 100.0);
  return buffer;
}
}  // namespace

std::string coverage_report(const model::Model& model) {
  std::string out;
  size_t all_bound = 0, all_total = 0;
  for (const auto& header : model.headers) {
    std::string lines;
    size_t bound = 0, total = 0;
    for (const auto& f : model.functions) {
      if (f.header != header) continue;
      ++total;
      const std::string name = f.alias_of.empty() ? f.name : f.name + " (calls " + f.alias_of + ")";
      if (f.skip_reason.empty()) {
        ++bound;
        lines += "  bound    " + name + "\n";
        for (const auto& p : f.params)
          if (is_buffer(p)) lines += buffer_line(f, p);
      } else {
        lines += "  skipped  " + name + ": " + f.skip_reason + "\n";
      }
    }
    // Fields: each one a Python property, or a skip with its reason.
    size_t fields = 0, fields_bound = 0;
    for (const auto& r : model.records) {
      if (r.header != header) continue;
      for (const auto& f : r.fields) {
        if (f.name.empty()) continue;  // an anonymous member: its own record's fields count
        ++fields;
        if (f.conversion.bound()) {
          ++fields_bound;
        } else {
          lines += "  skipped  field " + (r.public_name.empty() ? r.name : r.public_name) + "." + f.name + ": " +
                   f.conversion.skip_reason + "\n";
        }
      }
    }
    // Function pointer typedefs: each one a class of its name, or why not.
    for (const auto& c : model.callbacks) {
      if (c.header != header) continue;
      lines += c.has_class ? "  class    " + c.name + ": function pointer\n"
                           : "  skipped  class " + c.name + ": " + c.no_class_reason + "\n";
    }
    // Other names of a class, bound to it (name_type_aliases).
    for (const auto& a : model.type_aliases)
      if (a.header == header) lines += "  alias    " + a.name + ": the class " + a.target + "\n";
    out += header + ": " + std::to_string(bound) + "/" + std::to_string(total) + " functions bound (" +
           percent(bound, total) + "), " + std::to_string(total - bound) + " skipped; " +
           std::to_string(fields_bound) + "/" + std::to_string(fields) + " struct fields bound\n" + lines;
    all_bound += bound;
    all_total += total;
  }
  out += "total: " + std::to_string(all_bound) + "/" + std::to_string(all_total) + " functions bound (" +
         percent(all_bound, all_total) + "); " + std::to_string(model.enums.size()) + " enums, " +
         std::to_string(model.handles.size()) + " handles, " + std::to_string(model.records.size()) + " records, " +
         std::to_string(model.callbacks.size()) + " callback types, " + std::to_string(model.constants.size()) +
         " constants\n";
  return out;
}

}  // namespace cubind::emit

// The coverage report: every function of every header, bound or skipped
// with its reason, and totals.
#pragma once

#include <string>

#include "model/model.hpp"

namespace cubind::emit {

std::string coverage_report(const model::Model& model);

}  // namespace cubind::emit

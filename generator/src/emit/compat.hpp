// NVIDIA's C-level module of a library (spec [compat]): a thin function per
// bound function, with NVIDIA's exception clause, and the capsules of its
// __pyx_capi__ named with NVIDIA's signature texts (passes: spell_compat_signatures).
#pragma once

#include "emit/context.hpp"

namespace cubind::emit {

// The view of the module (template cy_module.pyx); `banner` heads the file.
View compat_view(const Context& ctx, const std::string& banner);

}  // namespace cubind::emit

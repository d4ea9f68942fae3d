// NVIDIA's C-level module of a library (spec [compat]): a thin function per
// bound function, with NVIDIA's exception clause, and the capsules of its
// __pyx_capi__ named with NVIDIA's signature texts (passes: spell_compat_signatures).
#pragma once

#include "emit/context.hpp"

namespace cubind::emit {

// The view of the module (template cy_module.pyx); `banner` heads the file.
View compat_view(const Context& ctx, const std::string& banner);

// The view of its .pxd for source consumers (template cy_module.pxd), written
// where cubind.get_include() finds it as NVIDIA's module (compat_pxd_path);
// `root` is the library's module view (its banner and C declarations).
View compat_pxd_view(const Context& ctx, const View& root);
std::string compat_pxd_path(const spec::Compat& compat);

}  // namespace cubind::emit

// How a struct's repr prints its fields, where the classic modules print
// some other than as their value's str().
#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

namespace {

bool is_void_pointer(const Type& t) { return t.kind == TypeKind::Pointer && t.pointee().kind == TypeKind::Void; }

}  // namespace

// NVIDIA's classic modules print exactly their `void *` fields (const or
// not) with hex(): `fence : 0x0`, `dstHost : 0x7f...`. A `void **`
// (kernelParams), a pointer to a struct or to a handle, a function pointer
// and a typedef of void* bound as a handle print as their value does. A
// fixed array of void* (the driver's CUeglFrame.frame.pPitch) prints each
// item in hex: NVIDIA's hex() of the list raises TypeError there.
void mark_hex_fields(Model& model) {
  for (auto& r : model.records)
    for (auto& f : r.fields)
      f.prints_hex = is_void_pointer(f.type) || (f.type.kind == TypeKind::Array && is_void_pointer(f.type.pointee()));
}

}  // namespace cubind::passes

# Marks cuda/bindings/ as a package for Cython's search of include_path: the
# .pxd files beside this one are generated (cubind-gen, template
# cy_module.pxd), one per module of NVIDIA's that a spec's [compat] serves.

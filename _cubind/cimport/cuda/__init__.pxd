# Marks cuda/ as a package for Cython's search of include_path, so that
# `from cuda.bindings cimport cydriver` finds NVIDIA's module names here
# (cubind.get_include()). Nothing is declared: cubind's own `cuda` package
# and its .pxd files are found on sys.path as before.

"""Kernels and their launches: a kernel's parameter list (from its PTX or
the driver), each argument converted to what its parameter takes, the
compiled launch path, launch configurations. Importing it loads no CUDA
library."""

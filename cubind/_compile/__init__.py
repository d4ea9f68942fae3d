"""Compiling: NVRTC programs, modules loaded from their output (or from
files), the on-disk compile cache and the toolkit's include directories.
Importing it loads no CUDA library."""

"""``python -m cubind``: prints ``cubind.show_config()``, what a bug report
needs about this installation (packages built and skipped, CUDA headers and
libraries, GPUs, Python)."""

from cubind._config.report import show_config

show_config()

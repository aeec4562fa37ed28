"""kiln.config: the settings Numba-CUDA programs set as ``numba.cuda.config.NAME``.

CUDA_NVRTC_EXTRA_SEARCH_PATHS: directories, separated by ':', searched for the headers
that linked CUDA C sources (``declare_device(..., link=...)``, ``@jit(link=...)``,
``CUSource``) include, after a file's own directory for a quoted include.  kiln puts the
headers it finds in place when it reads the sources, so they are part of the program
and of its cache key (an edited header is a new key); includes it does not find (CUDA's
own headers) are left to the compiler.  Read when a kernel is compiled; the initial
value is the environment's NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS, as Numba's.  When the
program has loaded a module ``numba.cuda.config`` (it kept ``from numba.cuda import
config`` for its settings), that module's value is searched too, after this one.

Numba's other config flags are not read by kiln: kiln's settings are its KILN_*
environment variables and decorator options (docs/environment.md)."""
import os

CUDA_NVRTC_EXTRA_SEARCH_PATHS = os.environ.get("NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS", "")

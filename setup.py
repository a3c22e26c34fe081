"""OpenMP for the compiled loops that split their work among threads.

The extension modules and their flags are declared in pyproject.toml; this
adds the compiler's OpenMP flag to those that use ``cython.parallel``
(OPENMP_MODULES) when a test program with it compiles and links, as
scikit-learn's build once probed. Without it (Apple's Clang without
libomp, for one) ``prange`` runs its iterations in order in one thread:
the module builds and gives the same results, on one core.
"""

import os
import tempfile
import textwrap

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, LinkError

OPENMP_MODULES = {"skperc._kernel_perceptron_fast", "skperc._kernel_budget_fast"}

PROBE = textwrap.dedent(
    """\
    #include <omp.h>
    int main(void) {
        int n = 0;
        #pragma omp parallel reduction(+ : n)
        n += omp_get_num_threads() > 0;
        return n > 0 ? 0 : 1;
    }
    """
)


def openmp_flags(compiler):
    """The flags (compile, link) that turn OpenMP on with this compiler, or
    None when a program with them does not compile and link."""
    if compiler.compiler_type == "msvc":
        flags = (["/openmp"], [])
    else:
        flags = (["-fopenmp"], ["-fopenmp"])
    with tempfile.TemporaryDirectory() as directory:
        source = os.path.join(directory, "probe_openmp.c")
        with open(source, "w") as file:
            file.write(PROBE)
        try:
            objects = compiler.compile(
                [source], output_dir=directory, extra_postargs=flags[0]
            )
            compiler.link_executable(
                objects,
                "probe_openmp",
                output_dir=directory,
                extra_postargs=flags[1],
            )
        except (CCompilerError, CompileError, LinkError):
            return None
    return flags


class BuildWithOpenMP(build_ext):
    def build_extensions(self):
        flags = openmp_flags(self.compiler)
        if flags is None:
            print(
                "skperc: the compiler has no OpenMP; the compiled loops will "
                "run in one thread whatever n_jobs."
            )
        else:
            for extension in self.extensions:
                if extension.name in OPENMP_MODULES:
                    extension.extra_compile_args += flags[0]
                    extension.extra_link_args += flags[1]
        super().build_extensions()


setup(cmdclass={"build_ext": BuildWithOpenMP})

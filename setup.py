"""Build hook for the one compiled module: the exact Lyndon-coordinate kernel (everything else is pyproject.toml)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "workbench.lie._lyndon_kernel",
            ["workbench/lie/_lyndon_kernel.c"],
            extra_compile_args=["-O3", "-std=gnu11"],
            optional=True,  # without a C compiler the package falls back to its numpy engine (slower, same result)
        )
    ]
)

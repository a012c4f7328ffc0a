"""Build hooks: the one compiled module (the exact Lyndon-coordinate kernel) and the course inside the wheel.

Everything else is pyproject.toml.
"""

import runpy
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# The course's file list lives in the package (workbench/resources.py, stdlib only), read here without importing
# workbench: the build's environment need not be able to import it.
course_files = runpy.run_path(str(HERE / "workbench" / "resources.py"))["course_files"]


class BuildPyWithCourse(build_py):
    """Copy the course (notebooks, solutions, graders, site sources, committed results) into workbench/_course.

    A wheel has no repository beside the package; workbench.resources.course_root() finds this copy there.  An
    editable install reads the checkout itself, so nothing is copied for it.
    """

    def run(self):
        """Build the package as setuptools does, then copy the course beside it."""
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "workbench" / "_course"
        for relative in course_files(HERE):  # a link (notebooks/reference.md) is copied as its text
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            self.copy_file(str(HERE / relative), str(target / relative), preserve_mode=False)


setup(
    cmdclass={"build_py": BuildPyWithCourse},
    ext_modules=[
        Extension(
            "workbench.lie._lyndon_kernel",
            ["workbench/lie/_lyndon_kernel.c"],
            extra_compile_args=["-O3", "-std=gnu11"],
            optional=True,  # without a C compiler the package falls back to its numpy engine (slower, same result)
        )
    ],
)

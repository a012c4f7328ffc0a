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
COURSE_FILES = runpy.run_path(str(HERE / "workbench" / "resources.py"))["COURSE_FILES"]


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
        for folder, patterns in COURSE_FILES:
            for pattern in patterns:
                sources = [HERE / folder] if pattern == "" else sorted((HERE / folder).glob(pattern))
                for source in sources:
                    if source.is_file():  # reference.md is a link in the repository: its text is copied
                        destination = target / source.relative_to(HERE)
                        destination.parent.mkdir(parents=True, exist_ok=True)
                        self.copy_file(str(source), str(destination), preserve_mode=False)


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

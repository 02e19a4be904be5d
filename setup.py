"""Which packages the distribution holds; everything else about it is in pyproject.toml.

The repository keeps the Streamlit app in ``app/``, but a top-level package named ``app`` would collide with any
other project's ``app`` once installed, so the folder is installed as ``graphlink_app`` (``package_dir`` maps the
name to the folder). setuptools' automatic discovery does not follow such a mapping, and pyproject.toml can list
packages or find them but not rename what it finds, so the packages are found here: ``graphlink`` and its
subpackages as they are, ``app`` and its subpackages under the installed name. Editable installs (setuptools'
default, lenient mode) map both names to their folders through an import finder, so the repository's code runs.
The app's Documentation page shows the user guide, docs/guide.md, which is copied into the built package
(``BuildPy``; MANIFEST.in keeps it in a source distribution).
"""

from __future__ import annotations

import os

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

#: the installed name of the repository's app/ folder
APP_PACKAGE = "graphlink_app"
APP_FOLDER = "app"
#: the user guide the app's Documentation page shows; it lives with the other documents in docs/
GUIDE = os.path.join("docs", "guide.md")


class BuildPy(build_py):
    """``build_py`` that also puts the user guide into the built ``graphlink_app`` (an installed app has no docs/
    folder beside it). An editable install skips the copy: its app reads the checkout's docs/ folder."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            self.copy_file(GUIDE, os.path.join(self.build_lib, APP_PACKAGE, "guide.md"))


app_packages = [APP_PACKAGE + name[len(APP_FOLDER):]
                for name in find_packages(include=[APP_FOLDER, f"{APP_FOLDER}.*"])]
setup(packages=find_packages(include=["graphlink", "graphlink.*"]) + app_packages,
      package_dir={APP_PACKAGE: APP_FOLDER}, cmdclass={"build_py": BuildPy})

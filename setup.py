"""Build hook: ship the Streamlit app (app.py, pages/, .streamlit/config.toml) inside the wheel.

Everything else about the package is declared in pyproject.toml. The app's files stay at the
repository root (``./scripts/run-app.sh`` serves them from a checkout); a regular build
copies them to ``posviz/_app/`` so that ``posviz-app`` (:mod:`posviz.serve`) can start the app from
an installed wheel. Editable installs need no copy: ``posviz.serve`` then uses the checkout itself.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: (source relative to the repository root, glob) -> copied under posviz/_app/ with the same layout
APP_FILES = (("", "app.py"), ("pages", "*.py"), (".streamlit", "config.toml"))


class BuildPyWithApp(build_py):
    """``build_py`` that also copies the app's scripts into ``<build_lib>/posviz/_app``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "posviz" / "_app"
        for folder, pattern in APP_FILES:
            sources = sorted((ROOT / folder).glob(pattern))
            if not sources:
                raise FileNotFoundError(f"no {folder}/{pattern} to ship with the app")
            (target / folder).mkdir(parents=True, exist_ok=True)
            for source in sources:
                shutil.copyfile(source, target / folder / source.name)


setup(cmdclass={"build_py": BuildPyWithApp})

# The package's tests run against the build tree (ctest sets PYTHONPATH) or an installed xp.
pytest_plugins = ["xp.testing"]

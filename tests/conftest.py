"""What every pytest file under tests/ shares: the paths ctest passes (--t5studio, --model, ...), the
shared data folders, a fresh work folder, and ctest's skip convention: a run whose tests were all
skipped (they cannot run here) exits 77, ctest's SKIP_RETURN_CODE, with each reason printed by -ra."""
import os

import pytest

import pyutil

SKIPPED_EXIT = 77
_PATH_OPTIONS = {
    "--t5studio": "the t5studio binary under test",
    "--work": "a folder the test may empty and write (default: a pytest temporary folder)",
    "--model": "a model folder",
    "--recipes": "a folder of recipe files",
    "--data": "a data file or folder the test reads",
}


def pytest_addoption(parser):
    for flag, what in _PATH_OPTIONS.items():
        parser.addoption(flag, default=None, help=what)


def _path_option(config, flag):
    value = config.getoption(flag)
    if value is None:
        raise pytest.UsageError("%s is required here (%s)" % (flag, _PATH_OPTIONS[flag]))
    return os.path.abspath(value)


@pytest.fixture(scope="session")
def t5studio(pytestconfig):
    path = _path_option(pytestconfig, "--t5studio")
    assert os.access(path, os.X_OK), "--t5studio %s is not an executable" % path
    return path


@pytest.fixture(scope="session")
def model_dir(pytestconfig):
    return _path_option(pytestconfig, "--model")


@pytest.fixture(scope="session")
def recipes_dir(pytestconfig):
    return _path_option(pytestconfig, "--recipes")


@pytest.fixture(scope="session")
def data_path(pytestconfig):
    return _path_option(pytestconfig, "--data")


@pytest.fixture(scope="session")
def work_dir(pytestconfig, tmp_path_factory):
    """The run's work folder, emptied first: --work when ctest names one (kept for a look afterwards)."""
    given = pytestconfig.getoption("--work")
    return pyutil.fresh_dir(os.path.abspath(given)) if given else str(tmp_path_factory.mktemp("work"))


@pytest.fixture(scope="session")
def test_data_dir():
    """tests/data: the tiny models and fixtures kept in the repository."""
    return os.path.join(pyutil.TESTS, "data")


@pytest.fixture(scope="session")
def shared_dir():
    """../shared beside the checkout: the larger data sets kept outside the repository."""
    return os.path.join(os.path.dirname(pyutil.ROOT), "shared")


# ---- measured numbers, printed after the run whatever the capture ----------------------------
_MEASURED = pytest.StashKey[list]()


def pytest_configure(config):
    config.stash[_MEASURED] = []


@pytest.fixture
def measured(pytestconfig):
    """measured(line): a number the test measured, listed in the summary (pytest hides passing output)."""
    return pytestconfig.stash[_MEASURED].append


def pytest_terminal_summary(terminalreporter, config):
    if config.stash[_MEASURED]:
        terminalreporter.section("measured")
        for line in config.stash[_MEASURED]:
            terminalreporter.write_line(line)


# ---- ctest's skip convention -------------------------------------------------------------------
def pytest_sessionfinish(session, exitstatus):
    """All selected tests skipped (none passed, none failed): exit 77, SKIP_RETURN_CODE for ctest."""
    stats = session.config.pluginmanager.get_plugin("terminalreporter").stats
    if exitstatus == 0 and stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = SKIPPED_EXIT

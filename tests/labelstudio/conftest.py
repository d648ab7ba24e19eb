"""What the Label Studio tests share: a real Label Studio (ls_server.py) and the processes to stop."""
import pytest

import ls_server


@pytest.fixture(scope="module")
def procs():
    """The processes a test module starts (serve, Label Studio): stopped at its end, last first."""
    started = []
    yield started
    ls_server.stop_all(started)


@pytest.fixture(scope="module")
def label_studio(work_dir, procs):
    """A Label Studio on a free loopback port: (url, auth headers)."""
    return ls_server.start_label_studio(work_dir, procs)

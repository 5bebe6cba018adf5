"""The mode word's text form, as Hadoop's FsPermission.toString prints it."""

import pytest

from nnlite.formats.mode import STICKY, mode_string


@pytest.mark.parametrize("bits, text", [
    (0o755, "rwxr-xr-x"),
    (0o644, "rw-r--r--"),
    (0o1777, "rwxrwxrwt"),
    (0o1776, "rwxrwxrwT"),                  # sticky without other-execute
    (0, "---------"),
    (STICKY, "--------T"),
])
def test_mode_string(bits, text):
    assert mode_string(bits) == text

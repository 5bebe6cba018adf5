"""modes.py: chmod modes, octal and symbolic, as FsShell's ``-chmod`` reads them."""

from __future__ import annotations

import pytest

from nnlite.client import errors
from nnlite.client.modes import parse_mode


@pytest.mark.parametrize("text, old, is_dir, new", [
    ("755", 0o000, False, 0o755),
    ("0644", 0o777, True, 0o644),
    ("1777", 0o755, True, 0o1777),
    ("7", 0o755, False, 0o007),
    ("u+x", 0o644, False, 0o744),
    ("go-w", 0o777, False, 0o755),
    ("a=r", 0o1777, True, 0o444),           # = with "a" clears the sticky bit too
    ("+x", 0o644, False, 0o755),
    ("u=rwx,g=rx,o=", 0o000, False, 0o750),
    ("a+X", 0o644, False, 0o644),           # X: a file without any x gains nothing
    ("a+X", 0o744, False, 0o755),
    ("a+X", 0o644, True, 0o755),
    ("+t", 0o777, True, 0o1777),
    ("o-t", 0o1777, True, 0o777),
    ("u+t", 0o777, True, 0o777),            # sticky only for o/a/nobody named
    ("ug+rw,o-rwx", 0o755, False, 0o770),
])
def test_parse_mode(text, old, is_dir, new):
    assert parse_mode(text).apply(old, is_dir) == new


@pytest.mark.parametrize("text", ["", "abc", "888", "17777", "u+q", "u+x,", "x+u", "755x",
                                  "u", "ug"])
def test_bad_modes(text):
    with pytest.raises(errors.BadArgumentError, match="invalid mode"):
        parse_mode(text)

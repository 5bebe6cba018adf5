"""Spark against a real namenode: Structured Streaming and RDD checkpoints written into nnlite
over webhdfs://, and a namenode SIGKILLed while Spark is checkpointing into it."""

from __future__ import annotations

import json
import urllib.request


def list_names(url: str, path: str) -> list[str]:
    """LISTSTATUS over WebHDFS: the child names of ``path`` (sorted)."""
    with urllib.request.urlopen(f"{url}/webhdfs/v1{path}?op=LISTSTATUS&user.name=root",
                                timeout=10) as resp:
        statuses = json.load(resp)["FileStatuses"]["FileStatus"]
    return sorted(s["pathSuffix"] for s in statuses)


def list_status(url: str, path: str) -> list[dict]:
    with urllib.request.urlopen(f"{url}/webhdfs/v1{path}?op=LISTSTATUS&user.name=root",
                                timeout=10) as resp:
        return json.load(resp)["FileStatuses"]["FileStatus"]


def read_bytes(url: str, path: str) -> bytes:
    """OPEN over WebHDFS (urllib follows the 307 to the data endpoint)."""
    with urllib.request.urlopen(f"{url}/webhdfs/v1{path}?op=OPEN&user.name=root",
                                timeout=10) as resp:
        return resp.read()


def batch_ids(url: str, path: str) -> list[int]:
    """The committed batch ids in a streaming checkpoint's offsets/ or commits/ dir (Spark's
    own temp files start with a dot and are skipped)."""
    return sorted(int(n) for n in list_names(url, path) if n.isdigit())

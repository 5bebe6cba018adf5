"""What a checkpoint reports (secondary/outcome.py): every phase timed, 0.0 when skipped, the
phase a failure hit named, and records that turn into the status page's JSON."""

from __future__ import annotations

import json

import pytest

from nnlite.secondary.outcome import PHASES, CheckpointResult, Failure, Phases


def test_phases_add_up_per_name_and_name_the_one_a_failure_hit():
    phases = Phases()
    assert phases.current == "status" and phases.seconds == dict.fromkeys(PHASES, 0.0)
    with phases("download"):
        pass
    with phases("download"):
        pass
    with pytest.raises(OSError), phases("replay"):
        raise OSError("torn edits")
    assert phases.current == "replay"
    assert phases.seconds["download"] > 0 and phases.seconds["replay"] > 0
    assert phases.seconds["roll"] == phases.seconds["upload"] == 0.0
    assert list(phases.seconds) == list(PHASES)


def test_a_result_and_a_failure_are_json_for_the_status_page():
    result = CheckpointResult("txns", 101, 200, 100, 4096, "ab" * 16, False,
                              {"roll": 0.123456, "replay": 1.0}, 1700000000.0)
    shown = json.loads(json.dumps(result.to_json()))
    assert shown["phases"] == {"roll": 0.1235, "replay": 1.0}
    assert (shown["first_txid"], shown["last_txid"], shown["image_downloaded"]) == (101, 200,
                                                                                  False)
    assert Failure(1.5, "upload", "refused").to_json() == {"time": 1.5, "phase": "upload",
                                                           "error": "refused"}

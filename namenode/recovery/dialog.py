"""The dialog of recovery with its operator: each Problem explained, a Choice answered, and the
Outcome summarised; ``Prompter`` is the terminal side.

Invariants: a Problem says, before anything is decided, exactly what CONTINUE and what STOP
would lose; QUIT is never recorded as a decision (it raises RecoveryQuit before any file
changes); ``Outcome.decisions`` holds the (Problem, Choice) pairs in the order they were asked,
and ``Outcome.summary()`` is the text the CLI prints.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from nnlite.namenode.errors import NamenodeError


class Choice(enum.Enum):
    CONTINUE = "continue"
    STOP = "stop"
    QUIT = "quit"


class RecoveryQuit(NamenodeError):
    """The operator quit recovery; no file was changed."""


@dataclass(frozen=True)
class Problem:
    """One thing recovery cannot get past without losing something."""
    kind: str            # "bad header", "corrupt record", "txid gap", "txid out of order",
    #                      "unappliable op", "undecodable tail"
    path: str
    offset: int
    txid: int | None     # the txid expected (or found) there
    found: str           # what was seen
    if_continue: str     # what CONTINUE loses
    if_stop: str         # what STOP loses

    def describe(self) -> str:
        txid = "" if self.txid is None else f", txid {self.txid}"
        return (f"Problem: {self.kind} in {self.path} at offset {self.offset}{txid}\n"
                f"  found:            {self.found}\n"
                f"  continue loses:   {self.if_continue}\n"
                f"  stop here loses:  {self.if_stop}")


@dataclass
class Outcome:
    """What recovery did; ``summary()`` is the text the CLI prints."""
    namespace_id: int = 0
    image_txid: int = 0          # txid of the image recovery started from
    last_txid: int = 0           # txid of the new image (every txid kept or deliberately lost)
    applied: int = 0
    decisions: list = field(default_factory=list)     # (Problem, Choice)
    torn_tails: list = field(default_factory=list)    # (path, offset, bytes)
    truncated: tuple | None = None                    # (path, offset) where STOP cut the log
    backups: list = field(default_factory=list)       # Paths of the .broken copies
    dirs: list = field(default_factory=list)

    def summary(self) -> str:
        lines = [f"Recovery finished: image txid {self.image_txid} + {self.applied} ops "
                 f"replayed -> new image at txid {self.last_txid}, fresh edits from txid "
                 f"{self.last_txid + 1}, in {', '.join(self.dirs)}"]
        if not self.decisions and not self.torn_tails:
            lines.append("  no problem found in the edits")
        for problem, choice in self.decisions:
            lost = problem.if_continue if choice is Choice.CONTINUE else problem.if_stop
            lines.append(f"  {problem.kind} at {problem.path}:{problem.offset}: "
                         f"{choice.value}; lost {lost}")
        for path, offset, length in self.torn_tails:
            lines.append(f"  torn tail in {path} at offset {offset} ({length} bytes) truncated")
        lines += [f"  kept a copy: {p}" for p in self.backups]
        return "\n".join(lines)


Decide = Callable[[Problem], Choice]


PROMPT = "[c]ontinue (skip it) / [s]top here (keep what came before) / [q]uit (change " \
         "nothing) / [a]lways continue"
ANSWERS = {"c": Choice.CONTINUE, "s": Choice.STOP, "q": Choice.QUIT, "a": Choice.CONTINUE}


class Prompter:
    """Explains each problem through ``say`` and asks through ``ask`` (which returns one of
    ANSWERS' keys); with ``force``, or after "always", it continues without asking.

    With ``shared_journal`` (the namenode belongs to an HA set) it stops at the first problem
    without asking: every op after it is in the set's shared journal, from which the namenode
    gets it back when it rejoins, while skipping a record would leave a namespace that claims
    txids it lacks, which the journal cannot mend."""

    def __init__(self, ask: Callable[[str], str], say: Callable[[str], None],
                 force: bool = False, shared_journal: bool = False):
        self.ask = ask
        self.say = say
        self.always = force
        self.reason = "--force" if force else ""
        self.shared_journal = shared_journal

    def __call__(self, problem: Problem) -> Choice:
        self.say(problem.describe())
        if self.shared_journal:
            self.say("  -> stop here (an HA namenode: what follows is in the shared journal, "
                     "and it gets it back from there when it rejoins)")
            return Choice.STOP
        if self.always:
            self.say(f"  -> continue ({self.reason})")
            return Choice.CONTINUE
        answer = self.ask(PROMPT).strip().lower()[:1]
        if answer == "a":
            self.always, self.reason = True, "always continue"
        return ANSWERS[answer]

"""Erasure coding as a NameNode whose every policy is disabled answers it.

nnlite keeps each block whole on one disk, so no path may be striped. The system policies
are Hadoop's (``SystemErasureCodingPolicies``: ids, names, schemas, 1 MiB cells) and all of
them are DISABLED, as on a NameNode started with ``dfs.namenode.ec.system.default.policy``
empty: GETECPOLICY answers null (replicated) for every path, SETECPOLICY is refused with
``FSDirErasureCodingOp``'s HadoopIllegalArgumentException, UNSETECPOLICY with
NoECPolicySetException, DISABLEECPOLICY changes nothing, and ENABLEECPOLICY is refused as a
feature switched off (UnsupportedActionException, like the storage policy satisfier). The
codecs are those Hadoop registers (``CodecRegistry``). The refusals are made here once, for
WebHDFS and for ``hdfs://``.
"""

from __future__ import annotations

from dataclasses import dataclass

from nnlite.namenode import errors

CELL_SIZE = 1024 * 1024


@dataclass(frozen=True)
class Policy:
    id: int
    codec: str
    data_units: int
    parity_units: int

    @property
    def name(self) -> str:
        codec = "RS-LEGACY" if self.codec == "rs-legacy" else self.codec.upper()
        return f"{codec}-{self.data_units}-{self.parity_units}-{CELL_SIZE // 1024}k"

    def to_json(self) -> dict:
        """JsonUtil.toJsonMap(ErasureCodingPolicy)."""
        return {"cellSize": CELL_SIZE, "codecName": self.codec, "id": self.id,
                "name": self.name, "numDataUnits": self.data_units,
                "numParityUnits": self.parity_units, "replicationPolicy": False,
                "schema": {"codecName": self.codec, "extraOptions": {},
                           "numDataUnits": self.data_units,
                           "numParityUnits": self.parity_units},
                "systemPolicy": True}


POLICIES = (Policy(1, "rs", 6, 3), Policy(2, "rs", 3, 2), Policy(3, "rs-legacy", 6, 3),
            Policy(4, "xor", 2, 1), Policy(5, "rs", 10, 4))
CODECS = {"rs": "rs_native, rs_java", "rs-legacy": "rs-legacy_java",
          "xor": "xor_native, xor_java"}


def by_name(name: str) -> Policy | None:
    return next((p for p in POLICIES if p.name == name), None)


def not_enabled(name: str, path: str) -> errors.HadoopIllegalArgumentError:
    """FSDirErasureCodingOp.getEnabledErasureCodingPolicyByName's refusal (none enabled)."""
    return errors.HadoopIllegalArgumentError(
        f"Policy '{name}' does not match any enabled erasure coding policies: []. An "
        f"erasure coding policy can be enabled by enableErasureCodingPolicy API.", path=path)


def none_set(path: str) -> errors.NoECPolicySetError:
    """FSDirErasureCodingOp.unsetErasureCodingPolicy's refusal: no policy is set on any path."""
    return errors.NoECPolicySetError(
        f"No erasure coding policy explicitly set on {path}", path=path)


def known(name: str) -> Policy:
    """The system policy ``name``, else ErasureCodingPolicyManager's refusal of the name."""
    policy = by_name(name)
    if policy is None:
        raise errors.HadoopIllegalArgumentError(f"The policy name {name} does not exist")
    return policy


def enabling_refused(name: str) -> errors.UnsupportedActionError:
    """ENABLEECPOLICY of a known policy: the feature is off here."""
    return errors.UnsupportedActionError(
        f"Cannot enable erasure coding policy {name}: this NameNode keeps every block "
        "replicated, with every erasure coding policy disabled")

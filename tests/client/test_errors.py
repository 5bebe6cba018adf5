"""errors.py: the registry from a RemoteException's Java class to the client's typed error, and
java_classes.py, the one table of those names the namenode answers with and the client reads."""

from __future__ import annotations

from nnlite.client import errors, java_classes
from nnlite.namenode import errors as namenode_errors
from nnlite.namenode.security.proxy_users import ImpersonationError


def test_every_registered_java_class_maps_back_to_its_class():
    for java_class, cls in errors.REGISTRY.items():
        error = errors.from_remote_exception({"javaClassName": java_class, "message": "m"},
                                        status=403)
        assert type(error) is cls and java_class == cls.JAVA_CLASS
        assert error.exception == java_class.rsplit(".", 1)[-1]
        assert isinstance(error, errors.ClientError)


def test_an_unknown_java_class_keeps_its_name_and_the_path_is_added():
    error = errors.from_remote_exception({"javaClassName": "org.example.OddException",
                                     "message": "odd"}, status=403, path="/p")
    assert type(error) is errors.RemoteError and error.exception == "OddException"
    assert str(error) == "odd (/p)"
    named = errors.from_remote_exception({"javaClassName": "java.io.FileNotFoundException",
                                     "message": "File /p does not exist"}, status=404, path="/p")
    assert str(named) == "File /p does not exist"


# ------------------------------------------------------------------ one table of Java names

TABLE = {name: value for name, value in vars(java_classes).items() if name.isupper()}

# Names the namenode answers that the client has no class of its own for: a plain
# RemoteError keeping the name (Hadoop's client re-raises them as they are, too).
NAMENODE_ONLY = {java_classes.NO_EC_POLICY_SET, java_classes.INVALID_TOKEN,
                 java_classes.UNSUPPORTED_ACTION, java_classes.LEASE_EXPIRED}


def classes_of(module) -> list[type]:
    return [c for c in vars(module).values()
            if isinstance(c, type) and c.__module__ == module.__name__ and "JAVA_CLASS" in vars(c)]


def test_the_table_spells_each_java_class_once():
    assert len(set(TABLE.values())) == len(TABLE)
    assert all(value.count(".") >= 2 and " " not in value for value in TABLE.values())


def test_the_client_recognises_only_names_of_the_table():
    assert {c.JAVA_CLASS for c in classes_of(errors)} <= set(TABLE.values())


def test_the_namenode_answers_only_names_of_the_table():
    answered = {c.JAVA_CLASS for c in classes_of(namenode_errors)} | {ImpersonationError.JAVA_CLASS}
    assert answered <= set(TABLE.values())


def test_the_client_reads_back_each_name_the_namenode_answers():
    """A new namenode error either gets a client class or joins NAMENODE_ONLY, knowingly."""
    for cls in classes_of(namenode_errors):
        error = errors.from_remote_exception({"javaClassName": cls.JAVA_CLASS, "message": "m"},
                                             status=403)
        assert error.java_class == cls.JAVA_CLASS
        recognised = type(error) is not errors.RemoteError
        assert recognised != (cls.JAVA_CLASS in NAMENODE_ONLY), cls
        if recognised:
            assert type(error).JAVA_CLASS == cls.JAVA_CLASS

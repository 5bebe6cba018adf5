"""errors.py: the registry from a RemoteException's Java class to the client's typed error."""

from __future__ import annotations

from nnlite.client import errors


def test_every_registered_java_class_maps_back_to_its_class():
    for java_class, cls in errors.REGISTRY.items():
        error = errors.from_remote_exception({"javaClassName": java_class, "message": "m"},
                                        status=403)
        assert type(error) is cls and cls.JAVA_CLASS == java_class
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

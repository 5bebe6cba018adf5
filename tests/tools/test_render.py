"""The viewers' XML text and output (tools/render.py): what XML can hold is escaped so that a
parser gives back the same string; what it cannot hold is said, or replaced in attributes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from nnlite.tools.render import open_text_output, xml_attr, xml_safe, xml_text

ROUND_TRIPS = ["plain", "a & b < c > d", "line\r\nend", "tab\there", "ünïcödé ✓", ""]


@pytest.mark.parametrize("text", ROUND_TRIPS, ids=repr)
def test_escaped_text_and_attributes_parse_back_to_the_same_string(text):
    element = ET.fromstring(f"<e a={xml_attr(text)}>{xml_text(text)}</e>")
    assert element.get("a") == text
    assert (element.text or "") == text


@pytest.mark.parametrize("text", ["\x00", "bell\x07", "\ufffe", "\ud800"], ids=repr)
def test_what_xml_cannot_hold_is_not_safe_and_becomes_a_replacement_in_attributes(text):
    assert not xml_safe(text)
    assert xml_safe(xml_attr(text))
    assert "\ufffd" in xml_attr(text)


def test_output_goes_to_a_utf8_file_or_to_standard_output(tmp_path, capsys):
    with open_text_output(str(tmp_path / "out.txt")) as out:
        out.write("é\n")
    assert (tmp_path / "out.txt").read_bytes() == "é\n".encode()
    with open_text_output("-") as out:
        out.write("to stdout\n")
    assert capsys.readouterr().out == "to stdout\n"

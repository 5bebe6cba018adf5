"""An op's field values written as JSON and as XML turn back into exactly the same values
(tools/values.py, ``oev`` both ways), and what cannot be a value is refused, naming where."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nnlite.tools.errors import InputError
from nnlite.tools.values import from_json, from_xml, to_json, to_xml

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4).map(tuple), max_leaves=12)


@given(VALUES)
def test_every_value_turns_back_from_json_text(value):
    assert from_json(json.loads(json.dumps(to_json(value))), "op 1") == value


@given(VALUES)
def test_every_value_turns_back_from_xml_text(value):
    element = ET.fromstring(f"<root>{to_xml('field', value)}</root>")[0]
    back = from_xml(element, "op 1")
    assert back == value and type(back) is type(value)


def test_a_string_xml_cannot_hold_goes_as_utf8_hex():
    assert to_xml("f", "bell\x07") == '<f t="str-hex">62656c6c07</f>'
    assert from_xml(ET.fromstring('<f t="str-hex">62656c6c07</f>'), "op 1") == "bell\x07"


@pytest.mark.parametrize("value, message", [
    (1.5, "unsupported value 1.5"),
    ({"other": 1}, 'must be {"$bytes": hex}'),
    ({"$bytes": "zz"}, "bad hex 'zz'"),
])
def test_json_that_is_no_value_is_refused(value, message):
    with pytest.raises(InputError, match=re.escape(message)):
        from_json(value, "op 7")


@pytest.mark.parametrize("xml, message", [
    ('<f t="int">1.5</f>', "with text '1.5' is not a value"),
    ('<f t="bool">yes</f>', "with text 'yes' is not a value"),
    ('<f t="int"><item/></f>', "cannot have child elements"),
    ('<f t="str-hex">ff</f>', "str-hex is not UTF-8"),
    ('<f t="repr">1.5</f>', "t='repr'"),
])
def test_xml_that_is_no_value_is_refused(xml, message):
    with pytest.raises(InputError, match=re.escape(message)):
        from_xml(ET.fromstring(xml), "op 7")

"""The status page (namenode/http/status.py) of an HA set's namenodes: each says its state; a
standby's page, which shows no catalog (it serves no read), links to the active's page."""

from __future__ import annotations

import html

import pytest

from tests.namenode.ha.haset import request

pytestmark = pytest.mark.crash


def page(haset, i: int) -> str:
    status, body = request(haset.url(i), "GET", "/")
    assert status == 200, body[:300]
    return body.decode()


def test_each_page_says_its_state_and_a_standby_links_to_the_active(haset):
    active = haset.start_all()
    standby = 1 - active
    mine = page(haset, active)
    assert '<dd id="ha-state">active</dd>' in mine
    assert '<dd id="ha-active">this namenode</dd>' in mine
    assert 'id="catalog"' in mine and 'id="catalog-on-active"' not in mine
    theirs = page(haset, standby)
    assert '<dd id="ha-state">standby</dd>' in theirs
    link = (f'<a id="ha-active-link" href="http://127.0.0.1:{haset.ports[active]}/">'
            f"{haset.ids[active]} (127.0.0.1:{haset.ports[active]})</a>")
    assert link in theirs, html.unescape(theirs)
    assert 'id="catalog-on-active"' in theirs and 'id="catalog"' not in theirs
    # the page's own links work on either
    for i in (active, standby):
        assert request(haset.url(i), "GET", "/jmx")[0] == 200
        assert request(haset.url(i), "GET", "/metrics")[0] == 200

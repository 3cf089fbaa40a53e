"""``$/cancel_request`` (schema newer than the SDK 0.12): decoded by hand in ``schema_ext``."""

from __future__ import annotations

import pytest

from acp_nvim.core.conversation import schema_ext


@pytest.mark.parametrize(("params", "expected"), [
    ({"requestId": 7}, 7), ({"requestId": "abc"}, "abc"), ({"requestId": 0, "_meta": {"x": 1}}, 0),
])
def test_a_cancel_request_names_the_request_it_withdraws(params, expected):
    assert schema_ext.cancel_request_id(params) == expected


@pytest.mark.parametrize("params", [None, [], {}, {"requestId": None}, {"requestId": True}, {"requestId": 1.5},
                                    {"requestId": [1]}, {"id": 7}])
def test_anything_else_is_no_cancel_request(params):
    assert schema_ext.cancel_request_id(params) is None


def test_the_params_we_send():
    assert schema_ext.cancel_request(12) == {"requestId": 12}

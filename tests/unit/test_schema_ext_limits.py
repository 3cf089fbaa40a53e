"""Usage limits as agents send them in ``usage_update``: claude-agent-acp's ``_meta["_claude/rateLimit"]``
and the quotas draft's ``limits`` list, decoded by hand (``schema_ext.usage_limits``), and the meter."""

from __future__ import annotations

import calendar
import time

import pytest

from acp_nvim.core.conversation.limits import Limits, clock
from acp_nvim.core.conversation.schema_ext import LIMIT_OK, LIMIT_REACHED, LIMIT_WARNING, UsageLimit, usage_limits

RESET = 1_800_000_000.0


def claude(info: dict[str, object]) -> dict[str, object]:
    return {"sessionUpdate": "usage_update", "used": 1, "size": 2, "_meta": {"_claude/rateLimit": info}}


@pytest.mark.parametrize(("info", "expected"), [
    ({"status": "rejected", "resetsAt": RESET, "rateLimitType": "five_hour"},
     UsageLimit("5h", LIMIT_REACHED, None, RESET)),
    ({"status": "allowed_warning", "resetsAt": RESET, "rateLimitType": "seven_day", "utilization": 0.91},
     UsageLimit("7d", LIMIT_WARNING, 0.91, RESET)),
    ({"status": "allowed", "resetsAt": RESET * 1000, "rateLimitType": "seven_day_opus"},  # milliseconds
     UsageLimit("7d opus", LIMIT_OK, None, RESET)),
    ({"status": "allowed", "utilization": 62}, UsageLimit("rate", LIMIT_OK, 0.62, None)),  # a percentage
    ({"status": "allowed", "rateLimitType": "a_new_window", "utilization": True}, UsageLimit("a_new_window",
                                                                                             LIMIT_OK, None, None)),
])
def test_claude_rate_limit_in_meta(info, expected):
    assert usage_limits(claude(info)) == [expected]


@pytest.mark.parametrize("info", [{}, {"status": "unknown"}, "rejected", None])
def test_a_claude_rate_limit_that_does_not_hold_is_no_limit(info):
    assert usage_limits(claude(info)) == []  # type: ignore[arg-type]


def test_the_quotas_draft_limits_list():
    update = {"sessionUpdate": "usage_update", "used": 1, "size": 2, "limits": [
        {"id": "five_hour", "usedPercent": 100, "resetsAt": "2027-01-15T08:00:00Z"},
        {"id": "weekly", "label": "week", "usedPercent": 40.5, "resetsAt": RESET, "status": "ok"},
        {"id": "opus", "status": "exceeded"},
        {"id": "naive", "resetsAt": "2027-01-15T08:00:00"},  # no zone: UTC
        {"usedPercent": 3}, "x", {"id": "", "usedPercent": 3}, {"id": "bad", "resetsAt": "tomorrow"},
    ]}
    jan15 = float(calendar.timegm((2027, 1, 15, 8, 0, 0, 0, 0, 0)))
    assert usage_limits(update) == [
        UsageLimit("5h", LIMIT_REACHED, 1.0, jan15),
        UsageLimit("week", LIMIT_OK, 0.405, RESET),
        UsageLimit("opus", LIMIT_REACHED, None, None),
        UsageLimit("naive", LIMIT_OK, None, jan15),
        UsageLimit("bad", LIMIT_OK, None, None),
    ]
    assert usage_limits(None) == [] and usage_limits({"limits": "no"}) == []


def test_the_meter_shows_the_window_nearest_its_limit_with_its_reset():
    limits = Limits()
    assert limits.meter() == "" and limits.reset_of_reached() is None
    assert limits.update([UsageLimit("5h", LIMIT_OK, 0.1, RESET), UsageLimit("weekly", LIMIT_OK, 0.4, RESET)])
    assert limits.meter() == f"weekly ▰▰▱▱▱ 40% · resets {clock(RESET)}"
    assert not limits.update([UsageLimit("5h", LIMIT_OK, 0.1, RESET)])  # nothing new
    limits.update([UsageLimit("5h", LIMIT_REACHED, None, RESET + 60)])
    assert limits.meter() == f"5h limit reached · resets {clock(RESET + 60)}"
    assert limits.reset_of_reached() == RESET + 60
    limits.update([UsageLimit("5h", LIMIT_WARNING, None, None)])
    assert limits.meter() == "5h near its limit" and limits.reset_of_reached() is None


def test_the_reset_time_reads_as_a_clock():
    now = time.mktime((2026, 12, 5, 12, 0, 0, 0, 0, -1))
    assert clock(now + 30, now) == "12:00:30"  # soon: to the second
    assert clock(now + 3600, now) == "13:00"
    assert clock(now + 86400, now) == time.strftime("%a 12:00", time.localtime(now + 86400))
    assert clock(now + 30 * 86400, now) == "2027-01-04 12:00"

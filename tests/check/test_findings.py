"""Findings output: deterministic order, plain table off a tty, JSON list, JUnit with passing cases."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import pytest

from fabricgen.base.findings import Finding, format_findings, sorted_findings

FINDINGS = [
    Finding("leaf10", "leaf10/frr.conf", "L12", "frr-parse", "Unknown command: ip adress 198.18.0.1/31"),
    Finding("leaf2", "leaf2/config_db.json", "/PORT/Ethernet8/mtu", "sonic-yang", 'value "9300" [68..9216]'),
    Finding("leaf2", "leaf2/config_db.json", "/PORT/Ethernet16/mtu", "sonic-yang", "out of range"),
    Finding("leaf10", "leaf10/frr.conf", "L9", "frr-parse", "Unknown command: foo"),
    Finding("leaf2", "leaf2/config_db.json", "/SCHEDULER/s/weight", "sonic-yang", "not a string", "warning"),
]
CHECKED = [("leaf1", "sonic-yang"), ("leaf2", "sonic-yang"), ("leaf10", "frr-parse"), ("leaf2", "frr-parse")]


def test_finding_is_frozen_and_defaults_to_error() -> None:
    f = Finding("d", "f", "L1", "r", "m")
    assert f.severity == "error"
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.rule = "other"  # type: ignore[misc]


def test_order_is_natural_and_independent_of_input_order() -> None:
    ordered = sorted_findings(FINDINGS)
    assert [(f.device, f.location) for f in ordered] == [
        ("leaf2", "/PORT/Ethernet8/mtu"),
        ("leaf2", "/PORT/Ethernet16/mtu"),
        ("leaf2", "/SCHEDULER/s/weight"),
        ("leaf10", "L9"),
        ("leaf10", "L12"),
    ]
    assert sorted_findings(reversed(FINDINGS)) == ordered
    assert sorted_findings(FINDINGS + FINDINGS[:1]) == ordered  # duplicates collapse


def test_json_is_a_sorted_list_of_objects() -> None:
    out = format_findings(FINDINGS, "json")
    data = json.loads(out)
    assert [Finding(**d) for d in data] == sorted_findings(FINDINGS)
    assert out == format_findings(list(reversed(FINDINGS)), "json")
    assert json.loads(format_findings([], "json")) == []


def test_plain_table_has_every_finding_on_one_line_and_no_escapes() -> None:
    out = format_findings(FINDINGS, "table", CHECKED, color=False)
    assert "\x1b[" not in out
    lines = out.splitlines()
    assert lines[0].split() == ["device", "file", "location", "severity", "rule", "message"]
    row = next(line for line in lines if "Ethernet8" in line)
    assert row.split()[:5] == ["leaf2", "leaf2/config_db.json", "/PORT/Ethernet8/mtu", "error", "sonic-yang"]
    assert row.endswith('value "9300" [68..9216]')  # brackets are text, not rich markup
    assert lines[-1] == "4 errors, 1 warning (3 devices checked)"


def test_table_without_findings_is_just_the_summary() -> None:
    assert format_findings([], "table", CHECKED, color=False) == "0 errors, 0 warnings (3 devices checked)\n"


def test_colored_table_uses_escapes() -> None:
    assert "\x1b[" in format_findings(FINDINGS, "table", CHECKED, color=True)


def test_junit_one_case_per_device_and_rule_with_failures() -> None:
    root = ET.fromstring(format_findings(FINDINGS, "junit", CHECKED))
    suite = root.find("testsuite")
    assert suite is not None
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert list(cases) == [
        ("leaf1", "sonic-yang"),
        ("leaf2", "frr-parse"),
        ("leaf2", "sonic-yang"),
        ("leaf10", "frr-parse"),
    ]
    assert suite.get("tests") == "4" and suite.get("failures") == "2"
    assert cases[("leaf1", "sonic-yang")].find("failure") is None
    assert len(cases[("leaf2", "sonic-yang")].findall("failure")) == 2
    out = cases[("leaf2", "sonic-yang")].find("system-out")
    assert out is not None and "not a string" in (out.text or "")
    failures = cases[("leaf10", "frr-parse")].findall("failure")
    assert [f.get("message") for f in failures] == [
        "leaf10/frr.conf:L9: Unknown command: foo",
        "leaf10/frr.conf:L12: Unknown command: ip adress 198.18.0.1/31",
    ]


def test_junit_without_checked_uses_the_findings() -> None:
    root = ET.fromstring(format_findings(FINDINGS, "junit"))
    assert len(list(root.iter("testcase"))) == 2


def test_unknown_format_is_rejected() -> None:
    with pytest.raises(ValueError, match="csv"):
        format_findings(FINDINGS, "csv")  # type: ignore[arg-type]

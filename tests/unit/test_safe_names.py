"""Every file the suite writes under a name it read (convert's <scenario>.yaml, --record's cassettes) stays in
its folder: safe_names.confined refuses any other name, and `streamcert convert` says so in one line, exit 2."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from streamcert.cli import main as streamcert
from streamcert.framelog import FrameLog
from streamcert.recordings import cassette
from streamcert.safe_names import UnsafeName, confined, why_unsafe

CASSETTES = resources.files("streamcert.cassettes") / "reference"

REFUSED = ["", ".", "..", "../evil", "../../escape/evil", "/tmp/evil", "a/b", "a\\b", "..\\..\\evil", "C:evil",
           "c:\\windows\\evil", "evil\n", "a\x00b", "nul", "NUL.yaml", "con", "Aux.txt", "com1.yaml", "LPT9",
           "com\u00b9", "conin$", "evil.", "evil ", "a?b", "a*b", 'a"b', "a<b", "a|b", "x" * 256]
ACCEPTED = ["stream-basic.yaml", "stream-basic@http-json.yaml", "ix-question", "..yaml-not-dots", "con-test.yaml",
            "nullable", "café ☕", "x" * 255]


@pytest.mark.parametrize("name", REFUSED)
def test_a_name_that_would_leave_its_folder_or_name_a_device_is_refused(tmp_path, name):
    assert why_unsafe(name)
    with pytest.raises(UnsafeName) as refused:
        confined(tmp_path, name, what="cassette name")
    message = str(refused.value)
    assert "\n" not in message and "cassette name" in message and repr(name)[:60] in message


@pytest.mark.parametrize("name", ACCEPTED)
def test_a_plain_file_name_is_the_file_in_its_folder(tmp_path, name):
    assert why_unsafe(name) is None
    assert confined(tmp_path, name) == tmp_path / name and (tmp_path / name).parent == tmp_path


def test_what_convert_and_record_write_is_confined():
    assert cassette.path_for("out", "stream-basic", "grpc").name == "stream-basic@grpc.yaml"
    for scenario, binding in (("../x", None), ("ok", "../../x"), ("/abs/x", None), ("nul", None)):
        with pytest.raises(UnsafeName):
            cassette.path_for("out", scenario, binding)


def cassette_named(tmp_path, scenario: str):
    """The reference stream-basic cassette, its scenario renamed (an untrusted file another team sent)."""
    log = FrameLog.load(CASSETTES / "stream-basic.yaml")
    data = log.to_json()
    data["scenario"] = scenario
    path = tmp_path / "in" / "sent.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), "utf-8")
    return path


@pytest.mark.parametrize("scenario", ["../../escape/evil", "ABSOLUTE", "nul", "sub/evil", "..\\evil"])
def test_convert_refuses_a_scenario_name_that_points_elsewhere(tmp_path, capsys, scenario):
    victim = tmp_path / "escape" / "evil.yaml"
    victim.parent.mkdir()
    victim.write_text("kept", "utf-8")
    if scenario == "ABSOLUTE":
        scenario = str(victim.with_suffix(""))
    source = cassette_named(tmp_path, scenario)
    into = tmp_path / "a" / "b"
    before = sorted(p for p in tmp_path.rglob("*"))
    assert streamcert(["convert", str(source), "--into", str(into), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "refused the cassette name" in err and str(source) in err
    assert victim.read_text("utf-8") == "kept" and sorted(p for p in tmp_path.rglob("*")) == before


def test_convert_still_writes_a_plain_scenario_name(tmp_path, capsys):
    source = cassette_named(tmp_path, "stream-basic")
    assert streamcert(["convert", str(source), "--into", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "stream-basic.yaml").is_file()


@pytest.mark.parametrize("cell_id", ["../../victim", "ABSOLUTE", "sub/cell", 7, None, "server:../../victim"])
@pytest.mark.parametrize("verb", ["merge", "diff"])
def test_matrix_merge_and_diff_refuse_a_cell_id_that_points_elsewhere(tmp_path, capsys, cell_id, verb):
    """A matrix.json comes from another runner (a CI artifact): a cell id is a folder name under its cells/, so
    one that would leave it (merge copies the cell's folder over the same name under --out, after removing it)
    is refused in one line, exit 2, and nothing is read, removed or written; so is a server's name (merge writes
    its badge, badges/<server>.json)."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "kept.txt").write_text("kept", "utf-8")
    if cell_id == "ABSOLUTE":
        cell_id = str(victim)
    sent = tmp_path / "x" / "sent"
    (sent / "cells").mkdir(parents=True)
    (tmp_path / "x" / "victim").mkdir()  # what merge would copy over the victim
    cell = {"id": cell_id, "verdict": "PASS"}
    if str(cell_id).startswith("server:"):
        cell = {"id": "s@jsonrpc", "kind": "server", "server": cell_id.removeprefix("server:"), "client": None}
    (sent / "matrix.json").write_text(json.dumps({"format": 1, "cells": [cell]}))
    before = sorted(p for p in tmp_path.rglob("*"))
    args = ["merge", str(sent), "--out", str(tmp_path / "m")] if verb == "merge" else ["diff", str(sent), str(sent)]
    assert streamcert(["matrix", *args]) == 2
    err = capsys.readouterr().err
    what = "server name" if cell.get("server") else "cell id"
    assert len(err.strip().splitlines()) == 1 and f"refused the {what}" in err and "matrix.json" in err, err
    assert (victim / "kept.txt").read_text("utf-8") == "kept" and sorted(p for p in tmp_path.rglob("*")) == before

"""A cassette is an untrusted input (issue 25): a YAML alias bomb is refused before anything is built, a file
past the cassette size cap is refused before it is read, with one line and exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from streamcert.cli import main
from streamcert.framelog import FrameLog
from streamcert.recordings import cassette

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "reference"


def alias_bomb(path: Path, levels: int = 12) -> Path:
    """A "billion laughs" document of about 500 bytes: 9**12 strings once its aliases are followed."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, levels):
        name, before = chr(ord("a") + n), chr(ord("a") + n - 1)
        lines.append(f"{name}: &{name} [" + ",".join([f"*{before}"] * 9) + "]")
    lines += [f"interactions: [*{chr(ord('a') + levels - 1)}]", "streamcert: {scenario: stream-basic, format: 2}"]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("command", ["check", "diff", "convert", "replay"])
def test_an_alias_bomb_is_refused_before_it_is_built(tmp_path, capsys, command):
    bomb = alias_bomb(tmp_path / "bomb.yaml")
    args = {"check": ["check", str(bomb), "--report", str(tmp_path / "r")],
            "diff": ["diff", str(CASSETTES / "stream-basic.yaml"), str(bomb)],
            "convert": ["convert", str(bomb), "--into", str(tmp_path / "out")],
            "replay": ["replay", str(bomb), "--pace", "fast"]}[command]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{bomb} is not a cassette: {cassette.ALIAS}"), err
    assert len(err.splitlines()) == 1


def test_a_cassette_is_built_as_the_safe_loader_builds_it_without_composing_it_whole():
    """The loader builds values from the parser's events (cassette._built): the same values as the safe loader's,
    for every reference cassette and for every kind of scalar; what the safe loader would not build is refused."""
    import yaml

    for path in sorted(CASSETTES.glob("*.yaml")):
        text = path.read_text("utf-8")
        assert cassette.SERIALIZER.deserialize(text) == yaml.load(text, Loader=cassette._Loader), path.name
    kinds = ('a: 1\nb: -2.5\nc: null\nd: ~\ne: true\nf: "1"\ng: \'x\'\nh: !!binary aGk=\ni: [1, {j: 0x10}]\n'
             'k: |\n  block\nl: 2026-12-01\nm: {}\nn: []\no: ""\np:\n')
    assert cassette.SERIALIZER.deserialize(kinds) == yaml.load(kinds, Loader=cassette._Loader)
    assert cassette.SERIALIZER.deserialize("") is None
    for refused in ("a: !!python/object:os.system {}\n", "? [1]\n: 2\n", "a: 1\n---\nb: 2\n", "a: !!set {x}\n"):
        with pytest.raises((ValueError, yaml.YAMLError)):
            cassette.SERIALIZER.deserialize(refused)


def test_the_suite_writes_no_alias_even_for_a_value_met_twice(tmp_path):
    log = FrameLog.load(CASSETTES / "stream-basic.yaml")
    shared = {"content-type": "application/json", "x-shared": "1"}
    for ex in log.exchanges:
        ex.response_headers = shared  # one object in every exchange: PyYAML's default would write &id001
    path = log.save(tmp_path / "stream-basic.yaml")
    text = path.read_text("utf-8")
    assert "&id" not in text and "*id" not in text
    assert all(ex.response_headers["x-shared"] == "1" for ex in FrameLog.load(path).exchanges)


def test_a_cassette_past_the_size_cap_is_refused_with_the_option_that_raises_it(tmp_path, capsys):
    path = shutil.copy(CASSETTES / "stream-basic.yaml", tmp_path / "stream-basic.yaml")
    assert main(["check", str(path), "--report", str(tmp_path / "r"), "--max-cassette-bytes", "4KiB"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"streamcert check: {path}: ") and "KiB reached the cassette size cap of 4 KiB " \
        "(raise it with --max-cassette-bytes)" in err, err
    assert not (tmp_path / "r").exists()
    for command in (["diff", str(path), str(path)], ["replay", str(path), "--pace", "fast"],
                    ["convert", str(path), "--into", str(tmp_path / "out")]):  # each takes the option it names
        assert main([*command, "--max-cassette-bytes", "4KiB"]) == 2, command
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"streamcert {command[0]}: {path}: ") and len(err.splitlines()) == 1, err
        assert "reached the cassette size cap of 4 KiB (raise it with --max-cassette-bytes)" in err, err
    assert not (tmp_path / "out").exists()
    assert main(["check", str(path), "--report", str(tmp_path / "r"), "--max-cassette-bytes", "1MiB"]) == 0



def test_a_cassette_is_read_as_the_parser_goes_and_a_large_body_kept_on_disk(tmp_path, monkeypatch):
    """The YAML text is never held whole (the parser reads the file as it goes), and a body past SPOOL_AFTER bytes
    is kept in a temporary file as the capture keeps it, its chunks reading the same bytes back: `check` of a
    30 MB cassette peaked at 184 MiB, 116 MiB so (bench/hostile.py)."""
    from pathlib import Path as PathType

    import logs

    from streamcert.limits import SPOOL_AFTER

    chunks = [logs.artifact_update("a1", text=f"token {n} " + "t" * 200, append=n > 0) for n in range(3000)]
    written = logs.frame_log(logs.sse("stream", [logs.stream_task(), *chunks]), scenario="stream-basic")
    path = written.save(tmp_path / "stream-basic.yaml")
    (stream,) = [ex for ex in written.exchanges if ex.label == "stream"]
    assert stream.size > SPOOL_AFTER

    def whole(*args, **kwargs):
        raise AssertionError("the cassette's text was read whole")

    monkeypatch.setattr(PathType, "read_text", whole)
    monkeypatch.setattr(PathType, "read_bytes", whole)
    loaded = FrameLog.load(path).get("stream")
    assert loaded.chunks and all(chunk.spooled for chunk in loaded.chunks)
    assert loaded.wire_bytes == stream.wire_bytes and [c.t for c in loaded.chunks] == pytest.approx(
        [c.t for c in stream.chunks], abs=1e-3)
    assert [ev.data for ev in loaded.events] == [ev.data for ev in stream.events]

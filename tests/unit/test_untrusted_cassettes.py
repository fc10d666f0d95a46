"""A cassette is an untrusted input (issue 25): a YAML alias bomb is refused before anything is built, a file
past the cassette size cap is refused before it is read, with one line and exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from streamcert import cassette
from streamcert.cli import main
from streamcert.framelog import FrameLog

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


@pytest.mark.parametrize("command", ["check", "diff", "convert"])
def test_an_alias_bomb_is_refused_before_it_is_built(tmp_path, capsys, command):
    bomb = alias_bomb(tmp_path / "bomb.yaml")
    args = {"check": ["check", str(bomb), "--report", str(tmp_path / "r")],
            "diff": ["diff", str(CASSETTES / "stream-basic.yaml"), str(bomb)],
            "convert": ["convert", str(bomb), "--into", str(tmp_path / "out")]}[command]
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
    assert main(["diff", str(path), str(path), "--max-cassette-bytes", "4KiB"]) == 2
    assert "reached the cassette size cap" in capsys.readouterr().err
    assert main(["check", str(path), "--report", str(tmp_path / "r"), "--max-cassette-bytes", "1MiB"]) == 0


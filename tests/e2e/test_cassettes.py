"""The shipped reference cassettes (vcrpy's YAML format, docs/cassettes.md): plain vcrpy and pytest-recording
load them, the suite judges them offline with the same rules (they pass; tampered, they fail on the broken
requirement), they round-trip losslessly, an older JSON cassette is read and converted, and the reference
still produces them (a regression run of the project against itself, in the diff's own terms).

Re-recording them (after a change of a driver or of the reference): the command in RERECORD below (the reference
cassettes are JSON-RPC recordings; --binding jsonrpc keeps the embedded run from writing @http-json and @grpc ones).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import subprocess
import sys
import textwrap
from functools import lru_cache
from importlib import resources
from itertools import groupby
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import jsonschema
import pytest
import vcr
import yaml

from streamcert import run_options
from streamcert.catalogue import load_catalogue, load_scenario, scenario_ids
from streamcert.cli import main as streamcert
from streamcert.contract.labels.push import WEBHOOK_PREFIX
from streamcert.drivers import run_scenario
from streamcert.framelog import Event, FrameLog
from streamcert.outcomes import Outcome
from streamcert.recordings import cassette
from streamcert.recordings.capture_diff import diff_logs
from streamcert.recordings.capture_shape import Capture
from streamcert.rules import RuleContext, judge
from streamcert.running.offline import check_cassettes
from streamcert.targets import embedded_headers

CASSETTES = resources.files("streamcert.cassettes") / "reference"
CLIENT_PROFILES = ("client", "acp-client")
# The client profiles are left out: a client case is served from its base recording (cases/client/, docs/clients.md).
RERECORD = ("streamcert run --record cassettes/reference --overwrite --profile a2a --profile interactions "
            "--profile plans --profile push --profile acp --profile progress --profile line --binding jsonrpc -- -n 2")


def cassette_paths() -> list[Path]:
    return sorted(Path(str(p)) for p in CASSETTES.iterdir() if p.name.endswith(".yaml"))


@lru_cache(maxsize=1)
def cassette_validator() -> jsonschema.Draft202012Validator:
    """cases/schemas/cassette.schema.json, read as the installed package holds it."""
    text = (resources.files("streamcert.cases") / "schemas" / "cassette.schema.json").read_text("utf-8")
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _as_json(value):
    """YAML's data as JSON's: a `!!binary` scalar (bytes) as the base64 text the file holds."""
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_json(v) for v in value]
    return base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value


# libyaml's safe loader where PyYAML was built with it: the same documents as yaml.safe_load, read several times
# faster (the pure-Python parser was two thirds of the schema test's time: 10.0 s → 3.2 s)
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str):
    return yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader


def schema_problems(path: Path) -> list[str]:
    """What in a cassette file goes against the cassette schema (empty: it validates)."""
    doc = _as_json(load_yaml(Path(path).read_text("utf-8")))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in cassette_validator().iter_errors(doc)]


def test_every_cassette_written_validates_against_the_schema(tmp_path, monkeypatch):
    for path in cassette_paths():
        assert schema_problems(path) == [], path.name
        assert schema_problems(FrameLog.load(path).save(tmp_path / path.name)) == [], path.name  # written anew
    monkeypatch.setattr(cassette, "STREAMED", 1024)  # the streamed path writes the file itself
    log = FrameLog.load(CASSETTES / "stream-basic.yaml")
    log.get("stream").chunks[0].data = b"\xff" + log.get("stream").chunks[0].data[1:]  # a body not UTF-8: !!binary
    assert schema_problems(log.save(tmp_path / "big.yaml")) == []
    assert "!!binary" in (tmp_path / "big.yaml").read_text("utf-8")


def test_a_broken_cassette_does_not_validate(tmp_path):
    text = (CASSETTES / "stream-basic.yaml").read_text("utf-8")
    doc = load_yaml(text)

    def broken(change) -> list[str]:
        copy = json.loads(json.dumps(doc))
        change(copy)
        path = tmp_path / "broken.yaml"
        path.write_text(yaml.safe_dump(copy), "utf-8")
        return schema_problems(path)

    stream = next(n for n, i in enumerate(doc["interactions"]) if i["response"]["streamcert"]["label"] == "stream")
    extra = lambda d: d["interactions"][stream]["response"]["streamcert"]  # noqa: E731
    assert broken(lambda d: None) == []  # the copy itself validates: each failure below is its change
    assert any("scenario" in p for p in broken(lambda d: d["streamcert"].pop("scenario")))
    assert broken(lambda d: d.update(metadata={}))
    assert any("body" in p for p in broken(lambda d: d["interactions"][0]["request"].update(body=None)))
    assert any("end" in p for p in broken(lambda d: extra(d).update(end="finished")))
    assert any("chunks" in p for p in broken(lambda d: extra(d)["chunks"].append([1.0, -3])))
    assert any("frames" in p for p in broken(lambda d: extra(d)["frames"][0].pop("data")))
    assert any("status" in p for p in broken(lambda d: d["interactions"][0]["response"]["status"].update(code=42)))


def test_every_scenario_has_a_reference_cassette():
    names = {p.stem for p in cassette_paths()}
    missing = sorted({s for s in scenario_ids() if load_scenario(s).profile not in CLIENT_PROFILES} - names)
    assert not missing, f"no reference cassette for {missing}: re-record them with `{RERECORD}`"


def test_reference_cassettes_pass_offline(tmp_path, capsys):
    report = check_cassettes(cassette_paths(), tmp_path)
    failing = [(r["id"], r["status"], r["message"][:200]) for r in report["requirements"]
               if r["status"] in ("FAIL", "ERROR")]
    assert not failing
    assert sum(r["status"] == "PASS" for r in report["requirements"]) >= 100
    assert (tmp_path / "compatibility.json").is_file()
    assert report["implementation"]["name"] == "streamcert reference agent"  # as the recorded card names it
    out = capsys.readouterr().out
    assert "streamcert verdict:" in out and "judged on the arrival times recorded in the cassettes" in out
    timed = {rid for rid, req in load_catalogue().items() if req.tolerance}
    for entry in report["requirements"]:  # a timing requirement says its figures are the recorded ones
        if entry["id"] in timed and entry["status"] == "PASS":
            assert "timing as recorded in" in entry["message"], entry


def test_a_tampered_cassette_fails_on_the_broken_requirement():
    log = FrameLog.load(CASSETTES / "stream-basic.yaml")
    stream = log.get("stream")
    # Drop frame 1 (the Task): the stream no longer begins with it.
    first = stream.data_events()[0]
    stream.events = [e for e in stream.events if e is not first]
    scenario = load_scenario("stream-basic")
    findings = {f.req_id: f for f in judge(log, ["A2A-STREAM-001"], RuleContext(scenario=scenario))}
    assert findings["A2A-STREAM-001"].outcome == Outcome.FAIL
    assert "not the Task" in findings["A2A-STREAM-001"].message


def test_cassette_round_trip_is_lossless(tmp_path):
    for path in cassette_paths():
        log = FrameLog.load(path)
        again = FrameLog.load(log.save(tmp_path / path.name))
        assert again.to_json() == log.to_json(), path.name


def test_the_format_is_vcrpys_with_the_suites_keys_inside():
    doc = load_yaml((CASSETTES / "stream-basic.yaml").read_text("utf-8"))
    assert doc["version"] == 1 and doc["streamcert"]["scenario"] == "stream-basic" and "metadata" not in doc
    stream = next(i for i in doc["interactions"] if i["response"]["streamcert"]["label"] == "stream")
    extra = stream["response"]["streamcert"]
    assert stream["request"]["method"] == "POST" and stream["response"]["status"]["code"] == 200
    assert isinstance(stream["response"]["body"]["string"], str)  # text, not base64
    assert sum(n for _, n in extra["chunks"]) == len(stream["response"]["body"]["string"].encode())
    assert [f["data"] for f in extra["frames"]] == [line[6:] for line in stream["response"]["body"]["string"].split("\n")
                                                    if line.startswith("data: ")]
    assert all(isinstance(f["t"], float) for f in extra["frames"])  # ms after the request


def test_plain_vcrpy_replays_a_request_through_httpx():
    path = CASSETTES / "stream-basic.yaml"
    log = FrameLog.load(path)
    recorded = log.get("stream")
    with vcr.use_cassette(str(path), record_mode="none") as cass:
        answer = httpx.post(recorded.url, json={"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage"},
                            headers={"Accept": "text/event-stream"})
        assert cass.play_count == 1
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
    assert answer.content == recorded.wire_bytes
    frames = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]
    assert [next(iter(f["result"])) for f in frames][0] == "task" and len(frames) == len(recorded.data_events())


BY_BODY = ["method", "uri", "body"]  # vcrpy's matchers, the request body among them
CONDITIONAL = {"if-none-match", "if-modified-since"}


def _replay_by_body(path: Path) -> int:
    """Each HTTP request of a cassette sent again through plain vcrpy matching on the body too: how many
    were answered with their recorded answer (a GET has no body: it matches only if written as vcrpy does). A
    conditional GET (the card asked again with its ETag, A2A-CARD-010) is the plain GET to a matcher that reads no
    header, so vcrpy answers it with the first: it is not sent."""
    log = FrameLog.load(path)
    written = load_yaml(path.read_text("utf-8"))["interactions"]
    played = 0
    with vcr.use_cassette(str(path), record_mode="none", match_on=BY_BODY, allow_playback_repeats=True):
        for ex, item in zip(log.exchanges, written):
            if ex.status is None or ex.method == "STDIO" or CONDITIONAL & {h.lower() for h in ex.request_headers}:
                continue
            body = item["request"]["body"]
            answer = httpx.request(ex.method, ex.url, content=body.encode() if body else None,
                                   headers={"Content-Type": "application/json"} if body else {})
            assert answer.status_code == ex.status and answer.content == ex.wire_bytes, (path.name, ex.label)
            played += 1
    return played


def test_a_request_without_a_body_is_written_as_vcrpy_writes_it(tmp_path):
    doc = load_yaml((CASSETTES / "card.yaml").read_text("utf-8"))
    assert {i["request"]["body"] for i in doc["interactions"] if i["request"]["method"] == "GET"} == {""}
    log = FrameLog.load(CASSETTES / "stream-basic.yaml")
    fresh = log.save(tmp_path / "stream-basic.yaml")
    gets = [i for i in load_yaml(fresh.read_text("utf-8"))["interactions"] if i["request"]["method"] == "GET"]
    assert gets and all(i["request"]["body"] == "" for i in gets)
    assert FrameLog.load(fresh).to_json() == log.to_json()  # read back as no body
    older = tmp_path / "older.yaml"  # a cassette written before: `body: null`, still read as no body
    older.write_text(fresh.read_text("utf-8").replace("    body: ''\n", "    body: null\n"), "utf-8")
    assert "body: null" in older.read_text("utf-8") and FrameLog.load(older).to_json() == log.to_json()


def test_plain_vcrpy_replays_every_request_matching_on_the_body(tmp_path):
    for name in ("card", "stream-basic", "list-tasks"):
        fresh = FrameLog.load(CASSETTES / f"{name}.yaml").save(tmp_path / f"{name}.yaml")
        assert _replay_by_body(CASSETTES / f"{name}.yaml") == _replay_by_body(fresh) > 0
    # Written as before (`body: null`), a GET matches nothing: the test can fail.
    older = tmp_path / "older.yaml"
    older.write_text((tmp_path / "card.yaml").read_text("utf-8").replace("    body: ''\n", "    body: null\n"))
    with pytest.raises(vcr.errors.CannotOverwriteExistingCassetteException):
        _replay_by_body(older)


def test_pytest_recording_loads_a_cassette(tmp_path):
    shipped = CASSETTES / "card.yaml"
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "test_card.yaml").write_bytes(shipped.read_bytes())
    url = FrameLog.load(shipped).get("card").url
    (tmp_path / "test_user.py").write_text(textwrap.dedent(f"""
        import httpx, pytest

        @pytest.fixture(scope="module")
        def vcr_cassette_dir():
            return "{tmp_path / 'cassettes'}"

        @pytest.fixture(scope="module")
        def vcr_config():
            return {{"match_on": {BY_BODY!r}}}

        @pytest.mark.vcr
        def test_card():
            card = httpx.get({url!r}).json()
            assert card["name"] and card["supportedInterfaces"]
    """))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--record-mode=none",
                           "-p", "no:xdist", "test_user.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout


def test_an_old_json_cassette_is_read_and_converted(tmp_path, capsys):
    log = FrameLog.load(CASSETTES / "stream-basic.yaml")
    old = tmp_path / "stream-basic.json"
    old.write_text(json.dumps(log.to_json(), indent=1), "utf-8")  # the suite's format 1, as --record wrote it
    assert FrameLog.load(old).to_json() == log.to_json()
    assert streamcert(["convert", str(old), "--into", str(tmp_path / "new")]) == 0
    converted = tmp_path / "new" / "stream-basic.yaml"
    assert converted.is_file() and FrameLog.load(converted).to_json() == log.to_json()
    assert streamcert(["convert", str(old), "--into", str(tmp_path / "new")]) == 2  # no silent overwrite
    assert "already there" in capsys.readouterr().err


def test_a_large_response_is_streamed_into_the_file_and_read_back(tmp_path, monkeypatch):
    monkeypatch.setattr(cassette, "STREAMED", 1024)  # every response of this log takes the streamed path
    monkeypatch.setattr(cassette, "_SLICE", 100)
    log = FrameLog.load(CASSETTES / "stream-basic.yaml")
    ex = log.get("stream")
    ex.events[1].data = " leading blank, a tab\t, quotes \" ', a backslash \\, é, \u2028 and \x85"
    path = log.save(tmp_path / "big.yaml")
    assert FrameLog.load(path).to_json() == log.to_json()
    with vcr.use_cassette(str(path), record_mode="none"):
        assert httpx.post(ex.url, json={}).content == ex.wire_bytes


def test_the_frames_of_a_large_response_are_written_one_at_a_time_and_read_back(tmp_path, monkeypatch):
    """Issue 25 (memory of --record): a large response's frames are one placeholder in the YAML document, written
    frame by frame into the file (never 100 000 YAML nodes at once), and read back as they were: comments, event
    types, ids, retry, a gap in the indices, long and awkward text."""
    monkeypatch.setattr(cassette, "STREAMED", 1024)
    monkeypatch.setattr(cassette, "_SLICE", 100)
    log = FrameLog.load(CASSETTES / "stream-basic.yaml")
    ex = log.get("stream")
    first = ex.events[0]
    ex.events[1:1] = [
        Event(index=1, t=first.t, kind="comment", data=" keep-alive"),
        Event(index=5, t=first.t + 0.5, data="x" * 350 + " \" \\ \u2028 \x85 é", event_type="note", last_event_id="7",
              retry=1500),
    ]
    text, streams = cassette.document(log)
    assert [kind for kind, _ in streams.parts.values()].count("frames") == len([e for e in log.exchanges
                                                                                 if e.events])
    assert first.data not in text and "keep-alive" not in text  # no frame of the document is built in memory
    path = log.save(tmp_path / "big.yaml")
    assert FrameLog.load(path).to_json() == log.to_json()
    assert schema_problems(path) == []
    assert "frames: \n" not in path.read_text("utf-8")


# -- the reference still produces them -------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference_target():
    from streamcert.reference.process import ReferenceProcess

    process = ReferenceProcess()
    process.start()
    try:  # as the embedded run: the test token its secured agent requires, sent (targets.embedded_headers)
        yield dataclasses.replace(run_options.target_of(process.targets()), headers=embedded_headers({})[0],
                                  own_interfaces=True)
    finally:
        process.stop()


# Exchanges whose frames follow a race the scenario sets up on purpose (two identical answers at the same
# moment: which one the task takes, and what each stream then shows, is the scheduler's choice).
RACING = {"ix-concurrent": {"answer_1", "answer_1_twin"}}
# The push receiver's requests (webhook_N, numbered in arrival order): the agent's deliveries to several webhooks
# run at once, and a retry after a failure lands before or after another webhook's POST as the scheduler goes, so
# the numbering (and whether a last retry came before the driver stopped waiting) is no regression. What must not
# change: which webhooks were reached. (The PUSH- rules judge the deliveries themselves on every run.)
DELIVERIES = {"push-configs", "push-deliveries"}


def _webhooks_reached(log: FrameLog) -> set[str]:
    return {urlsplit(ex.url).path for ex in log.exchanges if ex.label.startswith(WEBHOOK_PREFIX)}


def timed(scenario_id: str) -> bool:
    catalogue = load_catalogue()
    return any(catalogue[rid].tolerance for rid in load_scenario(scenario_id).requirements if rid in catalogue)


# (ids that are not scenario ids: the plugin takes a test named after a scenario for a conformance test)
@pytest.mark.parametrize("path", cassette_paths(), ids=lambda p: f"cassette-{p.stem}")
def test_the_reference_still_produces_its_cassette(path, reference_target):
    recorded = FrameLog.load(path)
    live = run_scenario(recorded.scenario, reference_target)
    hint = f"\n(if the change is meant, re-record the cassettes: {RERECORD})"
    if timed(recorded.scenario):
        # How many data-only updates a paced stream carries follows the machine's timing: the sequence of
        # its frame kinds is compared with repeats collapsed, and no field.
        a, b = Capture(recorded), Capture(live)
        assert list(a.exchanges) == list(b.exchanges), hint
        for key in a.exchanges:
            assert [k for k, _ in groupby(a.kinds(key))] == [k for k, _ in groupby(b.kinds(key))], key + hint
        return
    diff = diff_logs(recorded, live, tolerance_s=None)  # shape and kinds, not timing: this machine is busy
    racing = RACING.get(recorded.scenario, set())
    diff.exchanges = [ex for ex in diff.exchanges if ex.key not in racing or ex.only_in]
    if recorded.scenario in DELIVERIES:
        assert _webhooks_reached(recorded) == _webhooks_reached(live), hint
        diff.exchanges = [ex for ex in diff.exchanges if not ex.key.startswith(WEBHOOK_PREFIX)]
    assert diff.count == 0, "\n".join(diff.lines()[:40]) + hint

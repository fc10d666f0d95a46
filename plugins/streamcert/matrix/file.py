"""The matrix file (docs/matrix.md): read, checked against matrix.schema.json (shipped beside this module) and
the rules a schema cannot say (one of url or command, names unique; that each known failure matches a cell is
plan.checked's, once the cells are known), all before anything starts. Every problem is one line; `load` raises
MatrixError holding them all."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

DEFAULTS = {"profiles": ["a2a"], "bindings": ["jsonrpc"], "stream_limit": 10.0, "start_limit": 20.0,
            "cell_limit": 600.0}


class MatrixError(ValueError):
    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass(frozen=True)
class Server:
    name: str
    url: str | None
    command: str | None
    profiles: tuple[str, ...]
    bindings: tuple[str, ...]
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Client:
    name: str
    command: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class KnownFailure:
    cells: str  # a glob over cell ids
    reason: str
    requirement: str | None = None  # a glob over requirement ids; None: the whole cell
    link: str | None = None

    def covers(self, cell_id: str) -> bool:
        return fnmatch.fnmatchcase(cell_id, self.cells)

    def json(self) -> dict[str, Any]:
        return {"cells": self.cells, "requirement": self.requirement, "reason": self.reason, "link": self.link}


@dataclass(frozen=True)
class Matrix:
    path: str
    servers: tuple[Server, ...]
    clients: tuple[Client, ...] = ()
    known_failures: tuple[KnownFailure, ...] = ()
    limits: dict[str, float] = field(default_factory=dict)  # stream_limit, start_limit, cell_limit


def schema() -> dict[str, Any]:
    return json.loads((resources.files("streamcert.matrix") / "matrix.schema.json").read_text("utf-8"))


def _where(path: Any, data: Any) -> str:
    """`servers[1] (ref)`: the place of a schema error, with the entry's name when it has one."""
    parts, node = [], data
    for step in path:
        parts.append(f"[{step}]" if isinstance(step, int) else f".{step}")
        node = node[step] if isinstance(node, (dict, list)) else None
        if isinstance(step, int) and isinstance(node, dict) and isinstance(node.get("name"), str):
            parts[-1] += f" ({node['name']})"
    return "".join(parts).lstrip(".") or "the file"


def _schema_lines(data: Any) -> list[str]:
    from jsonschema import Draft202012Validator

    lines = []
    for error in sorted(Draft202012Validator(schema()).iter_errors(data), key=lambda e: list(map(str, e.path))):
        if error.validator == "additionalProperties":
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            lines.append(f"{_where(error.path, data)}: unknown key(s) {', '.join(map(repr, extra))}")
        else:
            lines.append(f"{_where(error.path, data)}: {error.message}")
    return lines


def parse(data: Any, path: str = "<matrix>") -> Matrix:
    """The Matrix a parsed file describes, or MatrixError with one line per problem."""
    lines = _schema_lines(data)
    if lines:
        raise MatrixError([f"{path}: {line}" for line in lines])
    defaults = {**DEFAULTS, **(data.get("defaults") or {})}
    servers, clients, seen = [], [], set()
    for n, s in enumerate(data["servers"]):
        if ("url" in s) == ("command" in s):
            lines.append(f"servers[{n}] ({s['name']}): give exactly one of url (a running server) or command "
                         f"(one that starts it and prints its URL), {'not both' if 'url' in s else 'found neither'}")
        servers.append(Server(s["name"], s.get("url"), s.get("command"), tuple(s.get("profiles") or
                              defaults["profiles"]), tuple(s.get("bindings") or defaults["bindings"]),
                              tuple(s.get("args") or ())))
    for c in data.get("clients") or []:
        clients.append(Client(c["name"], c["command"], tuple(c.get("args") or ())))
    for kind, entries in (("server", servers), ("client", clients)):
        for entry in entries:
            if entry.name in seen:
                lines.append(f"{kind} {entry.name!r}: the name is used twice (server and client names are unique)")
            seen.add(entry.name)
    known = tuple(KnownFailure(k["cells"], k["reason"], k.get("requirement"), k.get("link"))
                  for k in data.get("known_failures") or [])
    matrix = Matrix(path, tuple(servers), tuple(clients), known,
                    {k: float(defaults[k]) for k in ("stream_limit", "start_limit", "cell_limit")})
    if lines:
        raise MatrixError([f"{path}: {line}" for line in lines])
    return matrix


def load(path: str | Path) -> Matrix:
    try:
        data = yaml.safe_load(Path(path).read_text("utf-8"))
    except OSError as exc:
        raise MatrixError([f"{path}: cannot read it ({exc.strerror or exc})"]) from None
    except yaml.YAMLError as exc:
        raise MatrixError([f"{path}: not YAML ({' '.join(str(exc).split())})"]) from None
    return parse(data, str(path))

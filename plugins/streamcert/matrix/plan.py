"""The cells of a matrix: each server on each binding it declares (`NAME@BINDING`), and each client against each
server recorded over JSON-RPC (`CLIENT~SERVER`: the replay serves that server's recordings). A group is a server
with the client cells that replay it: what one CI job runs (`matrix plan --json`, `matrix run --only GROUP`)."""

from __future__ import annotations

from dataclasses import dataclass

from .file import Matrix, MatrixError

REPLAY_BINDING = "jsonrpc"  # the replay server speaks JSON-RPC: clients are certified against those recordings


@dataclass(frozen=True)
class Cell:
    id: str
    kind: str  # "server" or "client"
    server: str
    binding: str
    client: str | None = None

    @property
    def group(self) -> str:
        return self.server

    @property
    def recording(self) -> str:
        """The server cell whose recordings a client cell replays (itself for a server cell)."""
        return f"{self.server}@{REPLAY_BINDING}" if self.kind == "client" else self.id


def cells(matrix: Matrix) -> list[Cell]:
    out = []
    for s in matrix.servers:
        out += [Cell(f"{s.name}@{b}", "server", s.name, b) for b in s.bindings]
    for s in matrix.servers:
        if REPLAY_BINDING in s.bindings:
            out += [Cell(f"{c.name}~{s.name}", "client", s.name, REPLAY_BINDING, c.name) for c in matrix.clients]
    return out


def checked(matrix: Matrix) -> Matrix:
    """The matrix, once every known failure matches a cell (one nobody could see would be lost coverage); else
    MatrixError with a line for each that matches none."""
    ids = [c.id for c in cells(matrix)]
    lines = [f"{matrix.path}: known_failures[{n}]: cells {k.cells!r} matches no cell of the matrix ({', '.join(ids)})"
             for n, k in enumerate(matrix.known_failures) if not any(k.covers(i) for i in ids)]
    if lines:
        raise MatrixError(lines)
    return matrix


def select(all_cells: list[Cell], only: list[str]) -> list[Cell]:
    """The cells `--only` names (a cell id or a group), with the server cells their client cells replay.
    Raises ValueError naming what matches nothing."""
    if not only:
        return list(all_cells)
    wanted = set()
    for name in only:
        found = {c.id for c in all_cells if name in (c.id, c.group)}
        if not found:
            raise ValueError(f"--only {name!r}: no cell or group of that name "
                             f"(cells: {', '.join(c.id for c in all_cells)})")
        wanted |= found
    wanted |= {c.recording for c in all_cells if c.id in wanted}
    return [c for c in all_cells if c.id in wanted]


def groups(all_cells: list[Cell]) -> list[dict[str, str]]:
    """`strategy.matrix`'s include list: one job per group."""
    order: dict[str, list[str]] = {}
    for c in all_cells:
        order.setdefault(c.group, []).append(c.id)
    return [{"group": g, "cells": " ".join(ids)} for g, ids in order.items()]


def lines(matrix: Matrix) -> list[str]:
    out = []
    for c in cells(matrix):
        what = (f"server {c.server} over {c.binding}" if c.kind == "server"
                else f"client {c.client} against {c.server}'s recordings (replayed)")
        out.append(f"{c.id:<32} group {c.group:<16} {what}")
    return out

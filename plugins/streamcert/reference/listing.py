"""ListTasks: filters, newest-first order, paging, and the listing fault variants."""

from __future__ import annotations

import base64
from typing import Any

from .. import a2a
from . import params as p
from .options import Options
from .rpc import invalid_params
from .store import TaskRecord, TaskStore


def encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode("ascii")


def decode_token(token: str | None) -> int:
    if not token:
        return 0
    try:
        kind, _, number = base64.urlsafe_b64decode(token.encode("ascii")).decode("ascii").partition(":")
        if kind == "offset" and number.isdigit():
            return int(number)
    except (ValueError, UnicodeError):
        pass
    raise invalid_params(f"pageToken {token!r} is not one this server issued")


def _select(records: list[TaskRecord], params: dict[str, Any], options: Options) -> list[TaskRecord]:
    context_id = p.optional_str(params, "contextId")
    state = p.optional_str(params, "status")
    if state is not None and state not in a2a.TASK_STATES:
        raise invalid_params(f"status must be a task state such as {a2a.WORKING}, got {state!r}")
    after = p.optional_time(params, "statusTimestampAfter")
    if options.has("list-filter-ignored"):
        context_id = state = None
    return [r for r in records
            if (context_id is None or r.context_id == context_id)
            and (state is None or r.state == state)
            and (after is None or r.status_at >= after)]


def list_tasks(store: TaskStore, params: dict[str, Any], options: Options) -> dict[str, Any]:
    page_size = p.optional_int(params, "pageSize", 1, a2a.LIST_PAGE_SIZE_MAX) or a2a.LIST_PAGE_SIZE_DEFAULT
    offset = decode_token(p.optional_str(params, "pageToken"))
    history_length = p.history_length(params)
    include_artifacts = p.optional_bool(params, "includeArtifacts") or options.has("list-artifacts-always")
    records = _select(store.all(), params, options)
    newest_first = not options.has("list-oldest-first")
    records.sort(key=lambda r: (r.status_at, r.seq), reverse=newest_first)
    if options.has("list-missing-task") and records:
        records = records[1:]
    size = len(records) if options.has("list-paging-broken") else page_size
    page = records[offset:offset + size]
    end = offset + size
    answer: dict[str, Any] = {
        "tasks": [r.snapshot(history_length, include_artifacts) for r in page],
        "nextPageToken": encode_token(end) if end < len(records) else "",
        "pageSize": page_size,
        "totalSize": len(records),
    }
    if options.has("plan-list-missing"):
        for task in answer["tasks"]:
            task.get("metadata", {}).pop(a2a.PROGRESS_EXT, None)
    if options.has("list-missing-fields"):
        answer = {"tasks": answer["tasks"]}
    return answer

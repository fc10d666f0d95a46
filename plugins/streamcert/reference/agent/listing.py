"""ListTasks: filters, newest-first order, paging; the listing fault variants after them."""

from __future__ import annotations

import base64
import re
from datetime import datetime
from typing import Any

from ...protocols import a2a, progress_v1
from ..faults import switch, variant
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
    if LIST_FILTER_IGNORED.on(options):
        context_id = state = None
    # "greater than or equal": a task stamped exactly `after` is listed (a2a.proto, ListTasksRequest)
    since = variant(options, _at_or_after, {LIST_AFTER_EXCLUSIVE: _strictly_after})
    return [r for r in records
            if (context_id is None or r.context_id == context_id)
            and (state is None or r.state == state)
            and (after is None or since(r.status_at, after))]


def _at_or_after(moment: datetime, after: datetime) -> bool:
    return moment >= after


def _page_size(params: dict[str, Any], options: Options) -> int:
    """pageSize, 1 to 100 (a2a.proto ListTasksRequest), else InvalidParams as A2A §6.5's example answers; unset: 50."""
    if LIST_PAGE_SIZE_UNBOUNDED.on(options):
        return _unbounded_page_size(params)
    size = p.optional_int(params, "pageSize", 1, a2a.LIST_PAGE_SIZE_MAX)
    return a2a.LIST_PAGE_SIZE_DEFAULT if size is None else size


def list_tasks(store: TaskStore, params: dict[str, Any], options: Options) -> dict[str, Any]:
    """One page of the tasks that match the filters, newest first."""
    page_size = _page_size(params, options)
    offset = decode_token(p.optional_str(params, "pageToken"))
    history_length = p.history_length(params)
    include_artifacts = p.optional_bool(params, "includeArtifacts") or LIST_ARTIFACTS_ALWAYS.on(options)
    records = sorted(_select(store.all(), params, options), key=lambda r: (r.status_at, r.seq), reverse=True)
    records = _break_order(records, options)
    size = len(records) if LIST_PAGING_BROKEN.on(options) else page_size
    page = records[offset:offset + size]
    end = offset + size
    answer: dict[str, Any] = {
        "tasks": [r.snapshot(history_length, include_artifacts) for r in page],
        "nextPageToken": encode_token(end) if end < len(records) else "",
        "pageSize": page_size,
        "totalSize": len(records),
    }
    return _break_answer(answer, options)


# -- fault variants ---------------------------------------------------------------------------------
LIST_FILTER_IGNORED = switch("list-filter-ignored")
LIST_ARTIFACTS_ALWAYS = switch("list-artifacts-always")
LIST_OLDEST_FIRST = switch("list-oldest-first")
LIST_MISSING_TASK = switch("list-missing-task")
LIST_PAGING_BROKEN = switch("list-paging-broken")
PLAN_LIST_MISSING = switch("plan-list-missing")
LIST_MISSING_FIELDS = switch("list-missing-fields")
LIST_AFTER_EXCLUSIVE = switch("list-after-exclusive")
LIST_SNAKE_CASE = switch("list-snake-case")
LIST_PAGE_SIZE_UNBOUNDED = switch("list-page-size-unbounded")


def _unbounded_page_size(params: dict[str, Any]) -> int:
    size = p.optional_int(params, "pageSize", -2**31)  # (fault: list-page-size-unbounded) any int32, answered as used
    return a2a.LIST_PAGE_SIZE_DEFAULT if size is None else size


def _strictly_after(moment: datetime, after: datetime) -> bool:
    return moment > after  # (fault: list-after-exclusive) the task stamped exactly then is left out


def _break_order(records: list[TaskRecord], options: Options) -> list[TaskRecord]:
    if LIST_OLDEST_FIRST.on(options):
        return records[::-1]  # (status time, seq) orders every task: reversed is oldest first
    if LIST_MISSING_TASK.on(options):
        return records[1:]
    return records


def _break_answer(answer: dict[str, Any], options: Options) -> dict[str, Any]:
    if PLAN_LIST_MISSING.on(options):
        for task in answer["tasks"]:
            task.get("metadata", {}).pop(progress_v1.URI, None)
    if LIST_MISSING_FIELDS.on(options):
        return {"tasks": answer["tasks"]}
    if LIST_SNAKE_CASE.on(options):
        return _snake_cased(answer, "ListTasksResponse")
    return answer


def _snake_cased(value: Any, message: str) -> Any:
    """(fault: list-snake-case) every member of the answer's messages under its proto field name (context_id,
    next_page_token), as an SDK that writes the proto names writes them; metadata and data stay as they are."""
    if not isinstance(value, dict):
        return value
    fields = a2a.ANSWER_MESSAGES[message]
    out = {}
    for key, item in value.items():
        inner = fields.get(key)
        if inner is not None:
            item = [_snake_cased(i, inner) for i in item] if isinstance(item, list) else _snake_cased(item, inner)
        out[re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower() if key in fields else key] = item
    return out

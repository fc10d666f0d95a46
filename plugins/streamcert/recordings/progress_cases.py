"""The progress line cases (cases/progress.json, or a project's own copy given by --progress-cases),
checked against cases/schemas/progress-cases.schema.json before anything is judged by them."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

CASES_FILE = "progress.json"
SCHEMA_FILE = "progress-cases.schema.json"


class CasesError(ValueError):
    """The cases file is missing, not JSON, or not what the schema describes (a clear one-line reason)."""


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    return json.loads((resources.files("streamcert.cases") / "schemas" / SCHEMA_FILE).read_text("utf-8"))


def problems(doc: Any) -> list[str]:
    """Every way `doc` departs from the schema (and unique case names), one line each."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    out = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(top)"
        out.append(f"{where}: {err.message}")
    if not out:
        seen: set[str] = set()
        for case in doc["cases"]:
            if case["name"] in seen:
                out.append(f"cases: the name {case['name']!r} is used twice")
            seen.add(case["name"])
    return out


def load_cases(path: str | Path | None = None) -> tuple[dict[str, Any], str]:
    """(the cases document, where it came from). Raises CasesError with a readable reason."""
    if path is None:
        where = f"cases/{CASES_FILE} (packaged)"
        text = (resources.files("streamcert.cases") / CASES_FILE).read_text("utf-8")
    else:
        where = str(path)
        try:
            text = Path(path).read_text("utf-8")
        except OSError as exc:
            raise CasesError(f"{where}: cannot be read ({exc.strerror or exc})") from None
        except UnicodeDecodeError as exc:
            raise CasesError(f"{where}: not UTF-8 ({exc})") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise CasesError(f"{where}: not JSON ({exc})") from None
    found = problems(doc)
    if found:
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        raise CasesError(f"{where} does not match {SCHEMA_FILE}: " + "; ".join(found[:3]) + more)
    return doc, where

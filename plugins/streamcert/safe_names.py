"""File names the suite takes from what it read (a cassette's scenario, a binding), confined to their folder.

Every file written under a name that came from an input (`streamcert convert`'s <scenario>.yaml, `--record`'s
cassettes) goes through `confined(folder, name)`: the name must be one plain file name, so the file lands in
`folder` and nowhere else. Refused (`UnsafeName`, a ValueError whose message is one line): an empty name, `.`
and `..`, any path separator (`/`, and `\\` as Windows reads it), a drive or stream colon, an absolute path,
control characters, the characters Windows forbids in a name (`<>:"|?*`), a name ending in a dot or a space
(Windows drops them, so two names would be one file), Windows' reserved device names (CON, PRN, AUX, NUL,
COM0-9, LPT0-9, also with an extension: `nul.yaml`), and a name longer than a file system allows (255 bytes).
"""

from __future__ import annotations

import re
from pathlib import Path

MAX_NAME_BYTES = 255  # ext4, APFS, NTFS (in UTF-16 units, fewer bytes): the smallest common bound
# Device names Windows reserves in every folder, whatever the extension (the superscript digits count too).
RESERVED = re.compile(r"(con|prn|aux|nul|conin\$|conout\$|(com|lpt)[0-9\u00b9\u00b2\u00b3])", re.IGNORECASE)
FORBIDDEN = re.compile(r'[\x00-\x1f\x7f/\\:<>"|?*]')


class UnsafeName(ValueError):
    """A name read from an input that would not stay one file in its folder."""


def why_unsafe(name: str) -> str | None:
    """Why `name` cannot be a file name of its own in a folder; None when it can."""
    if not isinstance(name, str) or not name:
        return "it is empty"
    if name in (".", ".."):
        return "it names a folder, not a file"
    found = FORBIDDEN.search(name)
    if found:
        what = "a path separator" if found.group(0) in "/\\" else f"the character {found.group(0)!r}"
        return f"it holds {what} (a file name must stay in its folder)"
    if name[-1] in ". ":
        return "it ends in a dot or a space"
    if RESERVED.fullmatch(name.split(".", 1)[0].rstrip(" ")):
        return "it is a device name Windows reserves"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return f"it is longer than {MAX_NAME_BYTES} bytes"
    return None


def confined(folder: str | Path, name: str, *, what: str = "name") -> Path:
    """`folder/name`, once `name` is shown to be one plain file name (else UnsafeName, saying which
    `what` and why, on one line)."""
    why = why_unsafe(name)
    if why is not None:
        raise UnsafeName(f"refused the {what} {_quoted(name)} as a file name: {why}")
    return Path(folder) / name


def _quoted(name: object, limit: int = 120) -> str:
    text = repr(name)  # control characters and line breaks escaped: the message stays one line
    return text if len(text) <= limit else text[:limit - 1] + "…"

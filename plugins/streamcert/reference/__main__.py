"""`python -m streamcert.reference`: serve the reference agent in the foreground (DESIGN §5, serve)."""

from __future__ import annotations

import argparse

from .faults import FAULTS, describe_faults
from .server import serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamcert.reference")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--fault", choices=sorted(FAULTS), help="serve this fault variant")
    parser.add_argument("--deterministic", action="store_true", help="counted ids and a fixed clock")
    parser.add_argument("--keepalive", type=float, default=None, help="seconds between ': ping' comments")
    parser.add_argument("--list-faults", action="store_true", help="list the fault variants and exit")
    args = parser.parse_args(argv)
    if args.list_faults:
        print("\n".join(describe_faults()))
        return 0
    return serve(port=args.port, fault=args.fault, deterministic=args.deterministic, keepalive=args.keepalive)


if __name__ == "__main__":
    raise SystemExit(main())

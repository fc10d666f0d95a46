"""Builds the serialized FileDescriptorSet that grpc_messages.py loads, from the project's own .proto files
(a2a_grpc.proto, google_rpc.proto), with grpc_tools' protoc. A development step, run after editing a .proto:

    python -m streamcert.protocols.grpc_build          # writes a2a_grpc.binpb beside this file

The set holds the two files and the well-known types they import (struct, timestamp, any), so that the
messages load into a descriptor pool of their own with nothing else installed (grpc_messages.py).
tests/unit/test_grpc_messages.py checks, where grpc_tools is installed, that the committed set is what the
.proto files build.
"""

from __future__ import annotations

import sys
import tempfile
from importlib import resources
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTO_FILES = ("a2a_grpc.proto", "google_rpc.proto")  # the project's own; the rest of the set is imported
DESCRIPTOR_SET = HERE / "a2a_grpc.binpb"


def build() -> bytes:
    """The FileDescriptorSet the .proto files build (without source info: the bytes depend only on the
    declarations). Needs grpc_tools (pip install grpcio-tools)."""
    from grpc_tools import protoc  # a development tool, never needed at run time

    includes = resources.files("grpc_tools") / "_proto"  # google/protobuf/*.proto, as grpc_tools ships them
    with tempfile.TemporaryDirectory(prefix="streamcert-proto-") as tmp:
        out = Path(tmp) / "set.binpb"
        args = ["protoc", f"--proto_path={HERE}", f"--proto_path={includes}", "--include_imports",
                f"--descriptor_set_out={out}", *PROTO_FILES]
        status = protoc.main(args)
        if status != 0:
            raise RuntimeError(f"protoc failed ({status}) on {', '.join(PROTO_FILES)}")
        return out.read_bytes()


def main() -> int:
    data = build()
    DESCRIPTOR_SET.write_bytes(data)
    print(f"wrote {DESCRIPTOR_SET} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

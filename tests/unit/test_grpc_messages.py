"""The gRPC message descriptors (protocols/a2a_grpc.proto, google_rpc.proto, their committed descriptor set)
and the ProtoJSON reading and writing of grpc_messages.py."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("google.protobuf", reason="the grpc extra is not installed")

from google.protobuf import descriptor_pb2, descriptor_pool  # noqa: E402

from streamcert.protocols import a2a  # noqa: E402
from streamcert.protocols import grpc_messages as g  # noqa: E402
from streamcert.protocols.grpc_build import DESCRIPTOR_SET, PROTO_FILES  # noqa: E402

# (message, field, number, type) as A2A 1.0.1's a2a.proto gives them: a sample across every message used
FIELD_FACTS = [
    ("Task", "id", 1, "string"), ("Task", "context_id", 2, "string"), ("Task", "status", 3, "TaskStatus"),
    ("Task", "artifacts", 4, "Artifact"), ("Task", "history", 5, "Message"), ("Task", "metadata", 6, "Struct"),
    ("TaskStatus", "state", 1, "TaskState"), ("TaskStatus", "message", 2, "Message"),
    ("TaskStatus", "timestamp", 3, "Timestamp"),
    ("Part", "text", 1, "string"), ("Part", "raw", 2, "bytes"), ("Part", "url", 3, "string"),
    ("Part", "data", 4, "Value"), ("Part", "metadata", 5, "Struct"), ("Part", "filename", 6, "string"),
    ("Part", "media_type", 7, "string"),
    ("Message", "message_id", 1, "string"), ("Message", "role", 4, "Role"), ("Message", "parts", 5, "Part"),
    ("Message", "reference_task_ids", 8, "string"),
    ("Artifact", "artifact_id", 1, "string"), ("Artifact", "parts", 4, "Part"), ("Artifact", "extensions", 6, "string"),
    ("TaskStatusUpdateEvent", "status", 3, "TaskStatus"), ("TaskStatusUpdateEvent", "metadata", 4, "Struct"),
    ("TaskArtifactUpdateEvent", "artifact", 3, "Artifact"), ("TaskArtifactUpdateEvent", "append", 4, "bool"),
    ("TaskArtifactUpdateEvent", "last_chunk", 5, "bool"),
    ("StreamResponse", "task", 1, "Task"), ("StreamResponse", "message", 2, "Message"),
    ("StreamResponse", "status_update", 3, "TaskStatusUpdateEvent"),
    ("StreamResponse", "artifact_update", 4, "TaskArtifactUpdateEvent"),
    ("SendMessageResponse", "task", 1, "Task"), ("SendMessageResponse", "message", 2, "Message"),
    ("SendMessageRequest", "tenant", 1, "string"), ("SendMessageRequest", "message", 2, "Message"),
    ("SendMessageRequest", "configuration", 3, "SendMessageConfiguration"),
    ("SendMessageConfiguration", "accepted_output_modes", 1, "string"),
    ("SendMessageConfiguration", "task_push_notification_config", 2, "TaskPushNotificationConfig"),
    ("SendMessageConfiguration", "history_length", 3, "int32"),
    ("SendMessageConfiguration", "return_immediately", 4, "bool"),
    ("GetTaskRequest", "id", 2, "string"), ("GetTaskRequest", "history_length", 3, "int32"),
    ("ListTasksRequest", "status", 3, "TaskState"), ("ListTasksRequest", "page_size", 4, "int32"),
    ("ListTasksRequest", "status_timestamp_after", 7, "Timestamp"),
    ("ListTasksRequest", "include_artifacts", 8, "bool"),
    ("ListTasksResponse", "tasks", 1, "Task"), ("ListTasksResponse", "next_page_token", 2, "string"),
    ("ListTasksResponse", "page_size", 3, "int32"), ("ListTasksResponse", "total_size", 4, "int32"),
    ("CancelTaskRequest", "id", 2, "string"), ("CancelTaskRequest", "metadata", 3, "Struct"),
    ("SubscribeToTaskRequest", "id", 2, "string"),
    ("TaskPushNotificationConfig", "url", 4, "string"), ("TaskPushNotificationConfig", "task_id", 3, "string"),
    ("GetTaskPushNotificationConfigRequest", "task_id", 2, "string"),
    ("GetTaskPushNotificationConfigRequest", "id", 3, "string"),
    ("ListTaskPushNotificationConfigsRequest", "task_id", 1, "string"),
    ("ListTaskPushNotificationConfigsRequest", "tenant", 4, "string"),
    ("ListTaskPushNotificationConfigsResponse", "configs", 1, "TaskPushNotificationConfig"),
    ("DeleteTaskPushNotificationConfigRequest", "task_id", 2, "string"),
    ("DeleteTaskPushNotificationConfigRequest", "id", 3, "string"),
    ("AgentCard", "name", 1, "string"), ("AgentCard", "version", 5, "string"),
    ("AuthenticationInfo", "scheme", 1, "string"),
    ("google.rpc.Status", "code", 1, "int32"), ("google.rpc.Status", "message", 2, "string"),
    ("google.rpc.Status", "details", 3, "Any"),
    ("google.rpc.ErrorInfo", "reason", 1, "string"), ("google.rpc.ErrorInfo", "domain", 2, "string"),
    ("google.rpc.ErrorInfo", "metadata", 3, "MetadataEntry"),
]


def _type_name(field) -> str:
    if field.message_type is not None:
        return field.message_type.name
    if field.enum_type is not None:
        return field.enum_type.name
    return {field.TYPE_STRING: "string", field.TYPE_BYTES: "bytes", field.TYPE_BOOL: "bool",
            field.TYPE_INT32: "int32"}[field.type]


@pytest.mark.parametrize("message,field,number,kind", FIELD_FACTS)
def test_field_numbers_and_types_are_the_specifications(message, field, number, kind):
    descriptor = g.message_class(message).DESCRIPTOR
    got = descriptor.fields_by_name[field]
    assert (got.number, _type_name(got)) == (number, kind)


def test_enums_and_service_are_the_specifications():
    pool = g.pool()
    states = pool.FindEnumTypeByName("lf.a2a.v1.TaskState")
    assert {v.name: v.number for v in states.values} == {
        "TASK_STATE_UNSPECIFIED": 0, "TASK_STATE_SUBMITTED": 1, "TASK_STATE_WORKING": 2, "TASK_STATE_COMPLETED": 3,
        "TASK_STATE_FAILED": 4, "TASK_STATE_CANCELED": 5, "TASK_STATE_INPUT_REQUIRED": 6, "TASK_STATE_REJECTED": 7,
        "TASK_STATE_AUTH_REQUIRED": 8}
    roles = pool.FindEnumTypeByName("lf.a2a.v1.Role")
    assert {v.name: v.number for v in roles.values} == {"ROLE_UNSPECIFIED": 0, "ROLE_USER": 1, "ROLE_AGENT": 2}
    service = pool.FindServiceByName("lf.a2a.v1.A2AService")
    methods = {m.name: (m.input_type.name, m.output_type.name, m.server_streaming) for m in service.methods}
    assert methods == {
        a2a.SEND_MESSAGE: ("SendMessageRequest", "SendMessageResponse", False),
        a2a.SEND_STREAMING_MESSAGE: ("SendMessageRequest", "StreamResponse", True),
        a2a.GET_TASK: ("GetTaskRequest", "Task", False),
        a2a.LIST_TASKS: ("ListTasksRequest", "ListTasksResponse", False),
        a2a.CANCEL_TASK: ("CancelTaskRequest", "Task", False),
        a2a.SUBSCRIBE_TO_TASK: ("SubscribeToTaskRequest", "StreamResponse", True),
        a2a.CREATE_PUSH_CONFIG: ("TaskPushNotificationConfig", "TaskPushNotificationConfig", False),
        a2a.GET_PUSH_CONFIG: ("GetTaskPushNotificationConfigRequest", "TaskPushNotificationConfig", False),
        a2a.LIST_PUSH_CONFIGS: ("ListTaskPushNotificationConfigsRequest", "ListTaskPushNotificationConfigsResponse",
                                False),
        a2a.DELETE_PUSH_CONFIG: ("DeleteTaskPushNotificationConfigRequest", "Empty", False),
        a2a.GET_EXTENDED_CARD: ("GetExtendedAgentCardRequest", "AgentCard", False),
    }
    # the module's tables say the same
    for method, (request, response, stream) in methods.items():
        said = (g.request_type(method), g.response_type(method).rsplit(".", 1)[-1], g.streaming(method))
        assert said == (request, response, stream)


def test_the_committed_descriptor_set_is_what_the_proto_files_build():
    pytest.importorskip("grpc_tools", reason="grpc_tools (grpcio-tools) is not installed")
    from streamcert.protocols.grpc_build import build

    def own(data: bytes) -> dict[str, bytes]:
        files = descriptor_pb2.FileDescriptorSet.FromString(data).file
        return {f.name: f.SerializeToString(deterministic=True) for f in files if f.name in PROTO_FILES}

    built, committed = own(build()), own(DESCRIPTOR_SET.read_bytes())
    assert set(committed) == set(PROTO_FILES)
    assert built == committed, "a .proto was edited: run python -m streamcert.protocols.grpc_build"


def test_the_messages_live_in_a_pool_of_their_own():
    g.message_class("Task")
    with pytest.raises(KeyError):
        descriptor_pool.Default().FindMessageTypeByName("lf.a2a.v1.Task")
    with pytest.raises(KeyError):
        descriptor_pool.Default().FindMessageTypeByName("google.rpc.ErrorInfo")


def test_another_declaration_in_the_default_pool_does_not_clash():
    """A peer (the a2a-sdk) puts its own lf.a2a.v1 and google.rpc messages in protobuf's default pool."""
    script = textwrap.dedent("""
        from google.protobuf import descriptor_pb2, descriptor_pool
        other = descriptor_pb2.FileDescriptorProto(name="lf/a2a/v1/a2a.proto", package="lf.a2a.v1", syntax="proto3")
        task = other.message_type.add(name="Task")
        task.field.add(name="other", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
                       label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        descriptor_pool.Default().Add(other)
        from streamcert.protocols import grpc_messages as g
        assert g.to_json(g.to_proto("Task", {"id": "t"})) == {"id": "t"}
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr


def test_protojson_round_trip():
    task = {
        "id": "t-1", "contextId": "c-1",
        "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-10-06T09:00:01.750Z",
                   "message": {"messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": "working"}]}},
        "artifacts": [{"artifactId": "a", "name": "n", "parts": [
            {"data": {"passed": 11, "ratio": 0.5, "nested": [1, None, True, "x"]}, "mediaType": "application/json"},
            {"raw": base64.b64encode(b"\x00\x01bytes").decode(), "filename": "f.bin"},
            {"url": "https://example.com/f"}]}],
        "history": [{"messageId": "m-0", "role": "ROLE_USER", "parts": [{"text": "hi"}], "taskId": "t-1",
                     "extensions": ["https://example.com/ext/v1"]}],
        "metadata": {"urn:streamcert:script": {"version": 1, "steps": [{"sleep": 250}]}},
    }
    assert g.to_json(g.to_proto("Task", task)) == task
    assert g.decode("Task", g.encode("Task", task)) == task
    event = {"artifactUpdate": {"taskId": "t", "contextId": "c", "append": True, "lastChunk": True,
                                "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}
    assert g.decode("StreamResponse", g.encode("StreamResponse", event)) == event


def test_required_fields_are_written_at_their_default():
    assert g.to_json(g.message_class("ListTasksResponse")()) == {
        "tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}
    status_only = g.decode("StreamResponse", g.encode("StreamResponse", {"statusUpdate": {"status": {}}}))
    assert status_only == {"statusUpdate": {"taskId": "", "contextId": "", "status": {"state": "TASK_STATE_UNSPECIFIED"}}}
    # fields that are not REQUIRED stay out at their default; a message that is absent stays absent
    assert g.decode("Task", g.encode("Task", {"id": "t"})) == {"id": "t"}
    update = g.decode("StreamResponse", g.encode("StreamResponse", {"artifactUpdate": {"taskId": "t", "contextId": "c"}}))
    assert update == {"artifactUpdate": {"taskId": "t", "contextId": "c"}}
    message = g.decode("Message", g.encode("Message", {"messageId": "m"}))
    assert message == {"messageId": "m", "role": "ROLE_UNSPECIFIED", "parts": []}


def test_timestamps_keep_milliseconds_and_whole_numbers_stay_integers():
    status = g.decode("TaskStatus", g.encode("TaskStatus", {"state": "TASK_STATE_COMPLETED",
                                                            "timestamp": "2026-10-06T09:00:02Z"}))
    assert status["timestamp"] == "2026-10-06T09:00:02.000Z"
    micro = g.decode("TaskStatus", g.encode("TaskStatus", {"state": "TASK_STATE_COMPLETED",
                                                           "timestamp": "2026-10-06T09:00:02.123456Z"}))
    assert micro["timestamp"] == "2026-10-06T09:00:02.123456Z"
    part = g.decode("Part", g.encode("Part", {"data": [3, 2.5, -7, 1e300]}))
    assert part["data"] == [3, 2.5, -7, 1e300]
    assert [type(v) for v in part["data"]] == [int, float, int, float]


@pytest.mark.parametrize("name,value,said", [
    ("GetTaskRequest", {"id": 7}, "id"),
    ("ListTasksRequest", {"status": "TASK_STATE_DONE"}, "TASK_STATE_DONE"),
    ("SendMessageRequest", {"message": {"messageId": "m", "role": "agent"}}, "agent"),
    ("GetTaskRequest", {"id": "t", "blocking": True}, "blocking"),
    ("SendMessageRequest", {"message": {"parts": [{"text": "a", "data": {}}]}}, "oneof"),
    ("GetTaskRequest", ["not", "an", "object"], "JSON object"),
])
def test_a_value_protobuf_cannot_express_is_a_proto_error(name, value, said):
    with pytest.raises(g.ProtoError) as caught:
        g.to_proto(name, value)
    assert said in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bytes_that_are_no_message_are_a_proto_error():
    for data in (b"\x0a\x05ab", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", b"\x0f"):
        with pytest.raises(g.ProtoError) as caught:
            g.decode("StreamResponse", data)
        assert "do not decode as lf.a2a.v1.StreamResponse" in str(caught.value)
    with pytest.raises(g.ProtoError):  # proto3 strings are UTF-8
        g.decode("Task", b"\x0a\x02\xff\xfe")


def test_status_details():
    info = g.error_info("TASK_NOT_FOUND", metadata={"taskId": "t-9"})
    data = g.status_bytes("NOT_FOUND", "no task t-9", [info])
    assert g.status_details(data) == (5, "no task t-9", [
        {"@type": a2a.ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": a2a.ERROR_DOMAIN,
         "metadata": {"taskId": "t-9"}}])
    # a detail of a type the suite does not declare is kept, not lost
    status = g.message_class(g.STATUS)(code=3, message="bad")
    other = status.details.add()
    other.type_url, other.value = "type.googleapis.com/google.rpc.BadRequest", b"\x0a\x00"
    assert g.status_details(status.SerializeToString()) == (3, "bad", [
        {"@type": "type.googleapis.com/google.rpc.BadRequest", "value": base64.b64encode(b"\x0a\x00").decode()}])
    with pytest.raises(g.ProtoError):
        g.status_details(b"\x0a\x05ab")
    assert g.code_name(5) == "NOT_FOUND" and g.code_name(99) == "CODE_99"


def test_grpc_is_available_here():
    assert g.grpc_available() is None


@pytest.mark.parametrize("given, expected", [
    ({}, "ERROR false"),
    ({"GRPC_VERBOSITY": "DEBUG", "GRPC_ENABLE_FORK_SUPPORT": "true"}, "DEBUG true"),  # a user's own stand
], ids=["unset", "the user's"])
def test_grpc_is_imported_with_the_suites_settings_unless_the_user_gave_them(given, expected):
    script = ("import os, sys; from streamcert.protocols.grpc_messages import import_grpc; "
              "print('grpc' in sys.modules, os.environ.get('GRPC_VERBOSITY'), os.environ.get('GRPC_ENABLE_FORK_SUPPORT')); "
              "import_grpc(); print('grpc.aio' in sys.modules, os.environ['GRPC_VERBOSITY'], "
              "os.environ['GRPC_ENABLE_FORK_SUPPORT'])")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")} | given
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    before, after = done.stdout.splitlines()
    assert before.startswith("False"), before  # nothing imported grpc, nor set the settings, before the call
    assert before.split(" ", 1)[1] == " ".join([given.get("GRPC_VERBOSITY", "None"),
                                                given.get("GRPC_ENABLE_FORK_SUPPORT", "None")])
    assert after == f"True {expected}"


def test_without_the_extra_streamcert_still_runs_json_rpc():
    """An install without the grpc extra: everything imports, the reference serves no gRPC, and the sentence
    says how to get it."""
    script = textwrap.dedent("""
        import sys
        for name in ("grpc", "grpc.aio", "google.protobuf"):
            sys.modules[name] = None  # an import of it fails, as when it is not installed
        import streamcert.cli, streamcert.rules, streamcert.drivers.a2a  # noqa: F401
        from streamcert.protocols.grpc_messages import grpc_available
        from streamcert.reference.agent.server import ReferenceServer
        import httpx
        print(grpc_available())
        with ReferenceServer() as server:
            card = httpx.get(server.url + "/.well-known/agent-card.json", timeout=10).json()
        print([i["protocolBinding"] for i in card["supportedInterfaces"]])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    assert len(lines) == 2, done.stderr
    assert "pip install 'streamcert[grpc]'" in lines[0]
    assert "GRPC" not in lines[1] and "JSONRPC" in lines[1]

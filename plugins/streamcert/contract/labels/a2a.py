"""Labels of the A2A drivers (drivers/a2a.py, multi.py, plans.py, script_steps.py), the ones every family
shares first (the card, the scripted stream, GetTask)."""

# shared by every A2A family
CARD = "card"  # GET of the agent card (the client's default label)
STREAM = "stream"  # SendStreamingMessage carrying the scenario's script
STREAM_PREFIX = "stream_"  # stream_N: the N-th prompt's stream of a `--prompt` run (N ≥ 2)
ANSWER_PREFIX = "answer_"  # answer_N: the answer to pause N (answer_N_turn of a `--prompt` run)
GET_TASK = "get_task"  # GetTask of the scenario's task after its stream
LIST_TASKS = "list_tasks"  # ListTasks of the task's context (plans)
SCRIPT_PROBE = "script_probe"  # the stream that asks the test agent which script steps it plays
# stream-task, task-history
GET_TASK_H0 = "get_task_h0"  # GetTask with historyLength 0
GET_TASK_H1 = "get_task_h1"  # GetTask with historyLength 1
# card
CARD_REVALIDATED = "card_revalidated"  # the card asked again with the validator the first came with
PROBE_PREFIX = "probe_"  # probe_<binding>: GetTask of an unknown id at each interface the card declares
# task-list
SEND_OTHER = "send_other"  # a task the driver makes first, in a context of its own
SEND_PREFIX = "send_"  # send_N: the N-th task made in the scenario's context
LIST_CONTEXT = "list_context"  # ListTasks of the context, whole
LIST_ARTIFACTS = "list_artifacts"  # ListTasks of the context with includeArtifacts
LIST_PAGE1 = "list_page1"  # ListTasks of the context, pageSize 2
LIST_PAGE2 = "list_page2"  # the page after it (its nextPageToken)
LIST_STATUS = "list_status"  # ListTasks of the context by a status no task has
LIST_AFTER = "list_after"  # ListTasks of the context by statusTimestampAfter
LIST_SIZE_OVER = "list_size_over"  # ListTasks with a pageSize past the largest allowed
LIST_SIZE_UNDER = "list_size_under"  # ListTasks with pageSize 0
LIST_PROTO_NAME = "list_proto_name"  # ListTasks with the proto field name context_id
# cancel
SUBSCRIBE = "subscribe"  # SubscribeToTask on the running task
CANCEL = "cancel"  # CancelTask of the running task
# errors
SETUP_DONE = "setup_done"  # SendMessage of a task that ends at once (the errors scenario's terminal task)
GET_UNKNOWN = "get_unknown"  # GetTask of an unknown id
SEND_UNKNOWN = "send_unknown"  # SendMessage naming an unknown task
CANCEL_UNKNOWN = "cancel_unknown"  # CancelTask of an unknown id
SUBSCRIBE_UNKNOWN = "subscribe_unknown"  # SubscribeToTask of an unknown id
CANCEL_TERMINAL = "cancel_terminal"  # CancelTask of the ended task
SEND_TERMINAL = "send_terminal"  # SendMessage to the ended task
SUBSCRIBE_TERMINAL = "subscribe_terminal"  # SubscribeToTask of the ended task
PATCH_VERSION = "patch_version"  # GetTask with A2A-Version 1.0.1 (a patch version of one spoken)
UNKNOWN_METHOD_CALL = "unknown_method"  # a JSON-RPC method no binding names
PARSE_ERROR = "parse_error"  # a body that is not JSON
INVALID_PARAMS = "invalid_params"  # SendMessage without its message
BAD_VERSION = "bad_version"  # GetTask with an A2A-Version no one speaks
NO_VERSION = "no_version"  # GetTask without A2A-Version
EMPTY_VERSION = "empty_version"  # GetTask with an empty A2A-Version
ID_STREAM = "id_stream"  # SendStreamingMessage whose JSON-RPC id is the empty string
SETUP_STREAM = "setup_stream"  # SendStreamingMessage of a task kept running (read up to its first event)
CROSS_CONTEXT = "cross_context"  # SendMessage naming the running task with another contextId
CLEANUP_CANCEL = "cleanup_cancel"  # CancelTask of that running task, to leave nothing behind
EXTENDED_CARD = "extended_card"  # GetExtendedAgentCard
SEND_UNKNOWN_MEMBER = "unknown_member"  # SendMessage whose message carries a member no Message has
GET_UNKNOWN_MEMBER = "unknown_member_get"  # GetTask of the task it made
MSG_PREFIX = "msg_"  # msg_<flaw>: SendMessage whose message lacks something (below)
MSG_NO_ROLE = "msg_no_role"  # a message without its role
MSG_NO_PARTS = "msg_no_parts"  # without its parts
MSG_EMPTY_PARTS = "msg_empty_parts"  # with no part
MSG_NO_MESSAGE_ID = "msg_no_message_id"  # without its messageId
MSG_UNKNOWN_ROLE = "msg_unknown_role"  # with a role the enum does not name
LIST_REFUSED = "list_refused"  # ListTasks of the context those messages went to
INVALID_JSONRPC = "invalid_jsonrpc"  # a request whose jsonrpc is not "2.0"
INVALID_NO_METHOD = "invalid_no_method"  # a request without its method
INVALID_ID_BOOL = "invalid_id_bool"  # a request whose id is a boolean
INVALID_ID_OBJECT = "invalid_id_object"  # a request whose id is an object
NOTIFY_GET = "notify_get"  # GetTask as a notification (no id)
NOTIFY_UNKNOWN = "notify_unknown"  # an unknown method as a notification
# extensions, capabilities
CARD_REQUIRED = "card_required"  # the card of the agent that requires an extension
EXT_NOT_ACTIVATED = "ext_not_activated"  # SendMessage without the extension it requires
CARD_NOSTREAM = "card_nostream"  # the card of the agent that declares no streaming
SETUP_NOSTREAM = "setup_nostream"  # SendMessage making a task on it
STREAM_REFUSED = "stream_refused"  # SendStreamingMessage to it
SUBSCRIBE_REFUSED = "subscribe_refused"  # SubscribeToTask on it
# security
CARD_SECURED = "card_secured"  # the card of the agent that declares security
AUTH_SEND = "auth_send"  # SendMessage with the run's credentials
UNAUTH_SEND = "unauth_send"  # SendMessage without them
UNAUTH_LIST = "unauth_list"  # ListTasks without them
EXTENDED_UNAUTH = "extended_unauth"  # GetExtendedAgentCard without them
# multi-stream
SUBSCRIBE_1 = "subscribe_1"  # the first SubscribeToTask on the running task
SUBSCRIBE_2 = "subscribe_2"  # the second, opened while the first is open
FOLLOW_UP = "follow_up"  # a blocking SendMessage to the task while both are open
ANSWER = "answer"  # the answer that moves the task on

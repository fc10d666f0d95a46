"""Exchange.notes keys the wire layer writes as it captures (wire/a2a_client.py, wire/bindings/, wire/grpc.py,
wire/stdio.py, wire/push_receiver.py, recordings/replay.py's server, running/proxy.py) and the rules read."""

# every binding
STREAMING = "streaming"  # True: the exchange was opened as a stream (SendStreamingMessage, SubscribeToTask, ...)
NOT_SENT = "not_sent"  # True: the request was never sent (no interface, credentials withheld, nothing to call)
ORIGIN = "origin"  # why the run's credentials were withheld from an interface at another origin (wire/urls.py)
LIMIT_S = "limit_s"  # the time limit (seconds) the stream was read under, when it was cut at it
IDLE_S = "idle_s"  # the silent gap (seconds) after which the suite stopped waiting (end `idle`)
UNJUDGED = "unjudged"  # {"reason": sentence, "cap": Target field, "figure": n, "limit": n}: why nothing is judged
OVERFLOW = "overflow"  # a response past its size cap: counts, a hash and the last bytes (see Capture.overflow)
CONTENT_ENCODING = "content_encoding"  # the Content-Encoding the capture decoded ("gzip", "deflate")
DECODED_LIMIT = "decoded_limit"  # the decompressed-size cap it decoded with
RESENT = "retried"  # why the request was sent again (the server had closed the reused connection), per resend
# an event stream (wire/sse.py's parser)
INVALID_UTF8 = "invalid_utf8"  # True: bytes that are not UTF-8 were replaced while decoding the stream
RETRY = "retry"  # the last `retry:` field the stream set (milliseconds)
OVERSIZE = "oversize"  # [[event index, bytes], ...]: events past the per-event size cap
# HTTP+JSON
PARAMS = "params"  # the operation's request message as the path and query carried it (a GET or DELETE)
ROUTE_RETRY = "route_retry"  # {"first": verb, "then": "GET"}: the route was asked again with another verb
# gRPC
GRPC_STATUS = "grpc_status"  # {"code": name, "message", "details"}: how the call ended (grpc-status and its details)
TRAILERS = "trailers"  # the call's trailing metadata
TRANSPORT_FAILURE = "transport_failure"  # True: the call failed below gRPC (no status from the server)
UNDECODABLE = "undecodable"  # [{"i": index, "error"}]: messages that are not the method's response type
# a program on stdin/stdout (wire/stdio.py)
LIMIT = "limit"  # {"cap", "figure", "limit", "awaiting"}: the cap at which the suite stopped the program
EXITED_AFTER = "exited_after"  # seconds from its start to its exit
STDERR = "stderr"  # the tail of its stderr
PARTIAL_LINE = "partial_line"  # a last line without its line end
PARTIAL_LINE_BYTES = "partial_line_bytes"  # the size of that line in bytes, when it was shortened to show
STDIN_CLOSED_EARLY = "stdin_closed_early"  # True: its stdin closed before the suite had written everything
# the push webhook receiver (wire/push_receiver.py)
WEBHOOK_PATH = "path"  # the path a webhook request was sent to (no query)
BODY_BYTES = "body_bytes"  # the size of its body
ABANDONED = "abandoned"  # seconds the receiver waited after the body before its sender closed the connection
PUSH_RECEIVER = "push_receiver"  # log.notes: {"listen": "HOST:PORT", "url": the base URL the agent was given}
PUSH_OVERFLOW = "push_overflow"  # log.notes: {"refused": n}: requests past the receiver's MAX_POSTS
# the replay server (recordings/replay.py): the requests it received, as the client-certification log holds them
SERVED_END = "served"  # how the answer to a request ended (None: none was served)
ANSWERED_BY = "answer"  # the label of the recorded exchange that answered it
NO_MATCH = "unmatched"  # why no recorded exchange answered it
REFUSED = "refused"  # why the request was refused before it was read whole (a body past its cap)

# the embedded run's reference client played in the suite's process (wire/inprocess.py)
IN_PROCESS = "in_process"  # True: the command's program ran in the suite's process, recorded as its process would be

"""Labels of the interrupted-state driver (drivers/interactions.py); N is the pause (1-based). It writes the
shared `card`, `stream` and answer_N (contract/labels/a2a.py) too."""

GET_PAUSE_PREFIX = "get_pause_"  # get_pause_N: GetTask at pause N
LIST_PAUSE_PREFIX = "list_pause_"  # list_pause_N: ListTasks of the context at pause N
SUBSCRIBE_PREFIX = "subscribe_"  # subscribe_N: SubscribeToTask opened at pause N, before its answer
TWIN_SUFFIX = "_twin"  # answer_N_twin: the same answer sent at the same moment
GET_IX_PREFIX = "get_ix_"  # get_ix_N: GetTask with the extension, for an `activate` answer's interactionId
TEXT_REPLY_PREFIX = "text_reply_"  # text_reply_N: a plain text reply at pause N
RETRY_PREFIX = "retry_"  # retry_M: answer M sent again, same messageId and body
REUSE_PREFIX = "reuse_"  # reuse_M: answer M's messageId with another body
WRONG_ID_PREFIX = "wrong_id_"  # wrong_id_N: an answer naming no interaction
STALE_PREFIX = "stale_"  # stale_N: an answer naming pause N-1's interaction
GET_AFTER_PREFIX = "get_after_"  # get_after_<label>: GetTask right after wrong_id_N or stale_N
GET_AFTER_TEXT_PREFIX = "get_after_text_"  # get_after_text_N: GetTask right after text_reply_N
GET_AFTER_RETRY_PREFIX = "get_after_retry_"  # get_after_retry_N: GetTask right after retry_(N-1)
GET_FINAL = "get_final"  # GetTask after the streams ended
ANSWER_TERMINAL = "answer_terminal"  # an answer to the ended task

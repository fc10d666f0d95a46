"""Labels of the push drivers (drivers/push.py, push_deliveries.py, and the errors scenario's push calls) and of
the webhook receiver (wire/push_receiver.py). A config's label is also the key of its webhook path
(contract/push.py HOOK_PATHS)."""

PUSH_TASK = "push_task"  # SendMessage making the task the configs are for
PUSH_CREATE = "push_create"  # CreateTaskPushNotificationConfig (the errors scenario, on an agent without push)
PUSH_GET = "push_get"  # GetTaskPushNotificationConfig of a config made
PUSH_LIST = "push_list"  # ListTaskPushNotificationConfigs of the task
PUSH_DELETE = "push_delete"  # DeleteTaskPushNotificationConfig (the errors scenario)
PUSH_CREATE_A = "push_create_a"  # a config kept to the end
PUSH_CREATE_B = "push_create_b"  # another config kept to the end
PUSH_CREATE_C = "push_create_c"  # a config deleted before the task moves on
PUSH_CREATE_SLOW = "push_create_slow"  # a config whose webhook answers late
PUSH_DELETE_C = "push_delete_c"  # DeleteTaskPushNotificationConfig of push_create_c
PUSH_CREATE_NOURL = "push_create_nourl"  # CreateTaskPushNotificationConfig without a url
PUSH_GET_UNKNOWN = "push_get_unknown"  # GetTaskPushNotificationConfig of an id no agent made
PUSH_DELETE_UNKNOWN = "push_delete_unknown"  # DeleteTaskPushNotificationConfig of that id
PUSH_GET_DELETED = "push_get_deleted"  # GetTaskPushNotificationConfig of push_create_c, deleted
PUSH_LIST_UNKNOWN_TASK = "push_list_unknown_task"  # ListTaskPushNotificationConfigs of an unknown task
PUSH_CREATE_UNKNOWN_TASK = "push_create_unknown_task"  # CreateTaskPushNotificationConfig for an unknown task
# push-deliveries
INLINE = "inline"  # the webhook of the config given inline with SendMessage (a HOOK_PATHS key, no exchange)
INLINE_TASK = "inline_task"  # SendMessage with a push config inline
PUSH_CREATE_RETRY = "push_create_retry"  # a config whose webhook fails the first delivery
PUSH_CREATE_WAIT = "push_create_wait"  # a config whose webhook answers after the driver's wait
PUSH_CREATE_NOSCHEME = "push_create_noscheme"  # a config with credentials and no scheme
PUSH_SCREEN_PREFIX = "push_screen_"  # push_screen_<kind>: a config whose URL an agent should refuse
DELETE_SUFFIX = "_delete"  # push_screen_<kind>_delete: its DeleteTaskPushNotificationConfig, when it was made
PUSH_CREATE_D = "push_create_d"  # a config deleted twice
PUSH_DELETE_D = "push_delete_d"  # its DeleteTaskPushNotificationConfig
PUSH_DELETE_D_AGAIN = "push_delete_d_again"  # the same again
PUSH_LIST_PAUSE = "push_list_pause"  # ListTaskPushNotificationConfigs while the task is paused
PUSH_GET_INLINE = "push_get_inline"  # GetTaskPushNotificationConfig of the inline config
STREAM_CUT = "stream_cut"  # the answer's stream, read up to its first event
NOPUSH_CARD = "nopush_card"  # the card of the agent without push
NOPUSH_SEND = "nopush_send"  # SendMessage with a push config inline to it
WEBHOOK_PREFIX = "webhook_"  # webhook_N: the N-th request the receiver got, in arrival order

"""A2A-TASK-: ListTasks agrees with the tasks created; several clients on one task."""


def test_list_tasks(streamcert):
    streamcert.check("list-tasks")


def test_multi_client(streamcert):
    """Two clients on one task: a subscription held, one closed by its client, a second message by blocking
    SendMessage, the question answered by SendStreamingMessage; every stream carries the task on."""
    streamcert.check("multi-client")

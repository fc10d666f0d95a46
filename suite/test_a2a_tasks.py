"""A2A-TASK-: ListTasks agrees with the tasks created."""


def test_list_tasks(streamcert):
    streamcert.check("list-tasks")

"""LINE-: the progress line a client draws, case by case (cases/progress.json)."""


def test_line_cases(streamcert):
    streamcert.check("line-cases")

"""The line renderer's and the progress stream's drivers' logs (drivers/line.py, progress.py): notes keys the
rules read."""

CASES = "cases"  # log.notes: the cases the renderer is judged by
CASES_SOURCE = "cases_source"  # log.notes: where they came from
CASES_ERROR = "cases_error"  # log.notes: why they could not be used
INPUTS = "inputs"  # log.notes: [{"case", "form", "pass"}] in the order sent
LINES_MISSING = "lines_missing"  # the renderer's Exchange.notes: inputs it drew no line for
PROGRESS_POINTER = "progress_pointer"  # log.notes: the JSON pointer the progress rules read frames with

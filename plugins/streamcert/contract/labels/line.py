"""Labels of the line renderer's and the progress stream's drivers (drivers/line.py, progress.py)."""

LINE = "line"  # the renderer's run: one line out per input
PROGRESS = "progress"  # POST of the script to the progress endpoint, its stream read whole

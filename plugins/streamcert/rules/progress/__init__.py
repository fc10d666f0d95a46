"""The rules of profile progress (cases/catalogue/progress.json): a progress stream, with its view (progressview.py)."""

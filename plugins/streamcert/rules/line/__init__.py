"""The rules of profile line (cases/catalogue/line.json): a line renderer's output."""

"""The rules of profile plans (cases/catalogue/plans.json): progress/v1 plans over A2A, with their view (planview.py)."""

"""The rules of profile client (cases/catalogue/client.json): what an A2A client shows and sends, with its view
(clientview.py)."""

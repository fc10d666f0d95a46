"""The reference A2A agent: a real server on 127.0.0.1 that plays test-agent scripts (docs/contracts.md §6) over
JSON-RPC (app.py, rpc.py), HTTP+JSON (rest.py) and gRPC (grpc_server.py), hosting several agents (agents.py), with
push notifications (push.py), interrupted states (interactions.py, pauses.py) and plans (plans.py). Run it with
`streamcert serve` (server.py)."""

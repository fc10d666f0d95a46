"""`python -m streamcert.reference.acp_client`: runs client.py's main."""

from .client import main

raise SystemExit(main())

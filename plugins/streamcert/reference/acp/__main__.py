"""`python -m streamcert.reference.acp`: runs agent.py's main."""

from .agent import main

raise SystemExit(main())
